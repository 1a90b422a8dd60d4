"""The conversation summary reads the current branch's newest messages, not the whole tree:
its cost after every reply stays the same however long the conversation grew (issue 59)."""

from __future__ import annotations

import pytest

from conversations import branches, services
from conversations.models import Conversation, Message
from conversations.replies.summaries import latest_messages
from conversations.tree import Tree
from tests.support import seed

pytestmark = pytest.mark.django_db


def say(conversation, user, text: str, **fields) -> Message:
    return seed.add_message(
        conversation_id=conversation.pk,
        role=Message.Role.USER,
        content=text,
        created_by=user,
        **fields,
    )


def rows_read(monkeypatch) -> list[int]:
    """Record how many messages each tree read holds."""
    sizes: list[int] = []
    read = Tree.of.__func__

    def of(cls, conversation_id, **kwargs):
        tree = read(cls, conversation_id, **kwargs)
        sizes.append(len(tree.parent))
        return tree

    monkeypatch.setattr(Tree, "of", classmethod(of))
    return sizes


@pytest.mark.parametrize("history", [12, 300])
def test_the_summary_reads_only_the_newest_messages(monkeypatch, alice, history):
    conversation = services.create_conversation(user=alice)
    for i in range(history):
        say(conversation, alice, f"note {i}")
    sizes = rows_read(monkeypatch)

    found = latest_messages(conversation_id=conversation.pk, limit=10)

    assert [m.content for m in found] == [f"note {i}" for i in range(history - 10, history)]
    assert sizes == [10]


def test_the_summary_reads_the_current_branch_after_an_edit(alice):
    conversation = services.create_conversation(user=alice)
    first = [say(conversation, alice, f"note {i}") for i in range(8)]
    # Six messages on a branch the user then leaves by editing note 3.
    for i in range(6):
        say(conversation, alice, f"left behind {i}")
    say(conversation, alice, "note 3, edited", parent=first[2].pk)
    say(conversation, alice, "after the edit")
    conversation = Conversation.objects.get(pk=conversation.pk)
    shown = branches.list_messages(conversation=conversation, limit=5, newest=True)

    found = latest_messages(conversation_id=conversation.pk, limit=5)

    assert [m.pk for m in found] == [m.pk for m in shown]
    assert [m.content for m in found] == [
        "note 0",
        "note 1",
        "note 2",
        "note 3, edited",
        "after the edit",
    ]
