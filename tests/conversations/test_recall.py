"""Recall of a conversation's older messages reads what its candidates need, not the whole
conversation: a turn at message 2,000 costs what it costs at message 20 (issue 59)."""

from __future__ import annotations

from typing import Any

import pytest

from conversations import services
from conversations.models import Message
from conversations.replies import recall
from conversations.tree import Tree
from core import rls
from tests.support import seed

pytestmark = pytest.mark.django_db

QUESTION = "What colour was the vermilion badge again?"


def chat(conversation: Any, user: Any, contents: list[str], **fields: Any) -> list[Message]:
    """Add user/assistant messages in turn; return them."""
    return [
        seed.add_message(
            conversation_id=conversation.pk,
            role=Message.Role.USER if i % 2 == 0 else Message.Role.ASSISTANT,
            content=content,
            created_by=user if i % 2 == 0 else None,
            **(fields if i == 0 else {}),
        )
        for i, content in enumerate(contents)
    ]


def trees_read(monkeypatch) -> list[int]:
    """Record how many messages each tree read by recall holds."""
    sizes: list[int] = []
    read = Tree.of.__func__

    def of(cls, conversation_id, **kwargs):
        tree = read(cls, conversation_id, **kwargs)
        sizes.append(len(tree.parent))
        return tree

    monkeypatch.setattr(recall.Tree, "of", classmethod(of))
    return sizes


def recall_for(user: Any, conversation: Any, leaf: Message) -> list[str]:
    with rls.as_user(user.pk):
        found = recall.recall_branch_messages(
            conversation_id=conversation.pk,
            leaf_id=leaf.pk,
            query=QUESTION,
            present="",
            exclude_ids=[str(leaf.pk)],
        )
    return [item["content"] for item in found]


@pytest.mark.parametrize("history", [20, 400])
def test_recall_reads_the_branch_only_down_from_its_oldest_candidate(monkeypatch, alice, history):
    conversation = services.create_conversation(user=alice)
    chat(conversation, alice, [f"Small talk number {i}." for i in range(history)])
    badge = chat(conversation, alice, ["My badge is vermilion.", "Noted: a vermilion badge."])
    later = chat(conversation, alice, [f"More small talk {i}." for i in range(10)])
    sizes = trees_read(monkeypatch)

    found = recall_for(alice, conversation, later[-1])

    assert sorted(found) == sorted(m.content for m in badge)
    # From the badge on (12 messages), however long the conversation was before it.
    assert sizes == [12]


def test_a_newer_message_on_another_branch_is_not_recalled(alice):
    conversation = services.create_conversation(user=alice)
    (kept,) = chat(conversation, alice, ["My badge is vermilion."])
    fork_point = chat(conversation, alice, ["Noted.", "Anything else?"])[-1]
    chat(conversation, alice, ["Edited away: the vermilion badge was lost."])
    # An edit of that message: a new branch from its parent, the current one.
    edited = seed.add_message(
        conversation_id=conversation.pk,
        role=Message.Role.USER,
        content="Nothing else for now.",
        created_by=alice,
        parent=fork_point.pk,
    )

    assert recall_for(alice, conversation, edited) == [kept.content]
