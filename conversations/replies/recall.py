"""Recall within a conversation: older messages of the branch that left the agent's window.

When the user's message names something the kept messages and the summaries no longer
hold, the branch's older messages holding those words are found with the project's own
keyword search (text.ranking) and go into the request verbatim. No model call.
"""

from __future__ import annotations

import uuid
from typing import Any

from core.db_async import db_async
from text.ranking import missing_concepts, select_recalled

from ..models import Conversation, Message
from ..search import any_word_starts
from ..tree import Tree

MAX_RECALLED = 4
# The newest messages holding a missing word that are ranked: what a turn reads, matches
# and ranks stops growing here (at 500, a turn at message 4,000 took twice one at 400).
MAX_CANDIDATES = 100


def recall_branch_messages(
    *, conversation_id: Any, leaf_id: Any, query: str, present: str, exclude_ids: list[str]
) -> list[dict[str, Any]]:
    """Return the branch's older messages (root → `leaf_id`, none of `exclude_ids`) that
    hold words of `query` missing from `present`, best first: {id, role, content}."""
    items = missing_concepts(query, present)
    if not items:
        return []
    excluded = set()
    for value in exclude_ids:
        try:
            excluded.add(uuid.UUID(str(value)))
        except ValueError:
            continue
    forms = sorted({form for concept in items for form in concept.word_forms})
    rows = find_older_messages(conversation_id=conversation_id, words=forms)
    if not rows:
        return []
    # Which of them are on the branch: the branch's tail down from the oldest of them, read
    # alone (the whole tree grew with the conversation and made every turn slower).
    oldest = rows[-1]["sequence_number"]
    branch = set(Tree.of(conversation_id, since=oldest).path_to(leaf_id)) - excluded
    candidates = [
        {"id": str(r["id"]), "role": r["role"], "content": r["content"]}
        for r in rows
        if r["id"] in branch
    ]
    if not candidates:
        return []
    # Rarer words weigh more among the conversation's messages (its counter: a branch's
    # length would need the whole tree), the ones in view aside.
    population = max(len(candidates), _message_count(conversation_id) - len(excluded))
    return select_recalled(query, present, candidates, population=population, limit=MAX_RECALLED)


def _message_count(conversation_id: Any) -> int:
    found = Conversation.objects.filter(pk=conversation_id).values_list("message_count", flat=True)
    return found.first() or 0


def find_older_messages(*, conversation_id: Any, words: list[str]) -> list[dict[str, Any]]:
    """Return the conversation's newest user and assistant messages (at most
    MAX_CANDIDATES) holding a word that starts with one of `words`, newest first:
    {id, role, content, sequence_number}."""
    # The conversation's rows that hold a word, then (the caller) those on the branch: a
    # filter on the branch's ids (thousands in a long conversation) made every turn slower
    # than the last.
    holds_any = any_word_starts(conversation_id=conversation_id, words=words, limit=MAX_CANDIDATES)
    return list(
        Message.objects.filter(
            conversation_id=conversation_id, role__in=(Message.Role.USER, Message.Role.ASSISTANT)
        )
        .filter(holds_any)
        .order_by("-sequence_number")
        .values("id", "role", "content", "sequence_number")[:MAX_CANDIDATES]
    )


arecall_branch_messages = db_async(recall_branch_messages, close_serial=False)


def branch_recall(conversation_id: Any, leaf_id: Any):
    """Return the agent's `recall_messages` for one turn on the branch ending at `leaf_id`."""

    async def recall(query: str, present: str, exclude_ids: list[str]) -> list[dict[str, Any]]:
        return await arecall_branch_messages(
            conversation_id=conversation_id,
            leaf_id=leaf_id,
            query=query,
            present=present,
            exclude_ids=exclude_ids,
        )

    return recall
