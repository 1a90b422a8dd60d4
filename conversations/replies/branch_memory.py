"""Rebuild the agent's memory at any message of a conversation, from the database.

The agent thread keeps one checkpoint: the memory after the latest turn (agent/threads.py).
A turn that starts anywhere else (a regenerate, an edit, a switch to an older branch, a
fork) starts from memory rebuilt here. Every reply's ledger (`metadata.context`) records
what its model was given: the summaries, the window's message ids, the calibration. The
memory after a message is the ledger of the nearest reply up its branch, its window, and
the branch's messages since; the turn folds what is too much, as the memory rules say.

A ledger counts only where it was written: its window holds the question its reply
answers. A copied ledger (a fork's rows, an import of this app's export) names other
rows' ids and is passed over; a branch with none starts from all its messages.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from agent.threads import BranchMemory

from ..models import Message
from ..tree import Tree

# Replies looked at per query while walking up a branch for a ledger.
LEDGER_SCAN_BATCH = 50


def as_agent_message(message: Message) -> BaseMessage:
    """Return a stored message as the agent's message (same id, same text)."""
    if message.role == Message.Role.USER:
        return HumanMessage(id=str(message.pk), content=message.content)
    if message.role == Message.Role.ASSISTANT:
        return AIMessage(id=str(message.pk), content=message.content)
    return SystemMessage(id=str(message.pk), content=message.content)


def own_ledger(reply: Message) -> dict[str, Any] | None:
    """Return the reply's ledger if it was written for this reply (None otherwise)."""
    ledger = (reply.metadata or {}).get("context")
    if not isinstance(ledger, dict):
        return None
    ids, summaries = ledger.get("message_ids"), ledger.get("summaries")
    if not isinstance(ids, list) or not isinstance(summaries, list):
        return None
    return ledger if str(reply.parent_id) in ids else None


def _nearest_ledger(path: list[uuid.UUID]) -> tuple[int, dict[str, Any] | None]:
    """Return (where the memory's window starts on `path`, the ledger it comes from)."""
    end = len(path)
    while end > 0:
        batch = path[max(0, end - LEDGER_SCAN_BATCH) : end]
        replies = Message.objects.filter(pk__in=batch, role=Message.Role.ASSISTANT).only(
            "pk", "parent_id", "metadata"
        )
        by_id = {reply.pk: reply for reply in replies}
        for index in range(end - 1, end - 1 - len(batch), -1):
            reply = by_id.get(path[index])
            ledger = own_ledger(reply) if reply is not None else None
            if ledger is not None:
                window = {str(pk) for pk in ledger["message_ids"]}
                start = next((i for i in range(index) if str(path[i]) in window), index)
                return start, ledger
        end -= len(batch)
    return 0, None


def branch_memory(message_id: Any) -> BranchMemory:
    """Return the agent's memory right after `message_id`, on its branch."""
    conversation_id = Message.objects.values_list("conversation_id", flat=True).get(pk=message_id)
    path = Tree.of(conversation_id).path_to(uuid.UUID(str(message_id)))
    start, ledger = _nearest_ledger(path)
    window = path[start:]
    rows = Message.objects.filter(pk__in=window).only("pk", "role", "content")
    by_id = {row.pk: row for row in rows}
    summaries = [str(s.get("text", "")) for s in (ledger or {}).get("summaries", [])]
    return {
        "messages": [as_agent_message(by_id[pk]) for pk in window if pk in by_id],
        "summaries": [s for s in summaries if s],
        "calibration": float((ledger or {}).get("calibration") or 1.0),
    }
