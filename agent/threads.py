"""A conversation's agent thread: where a turn's memory starts, and what is kept of it.

A thread keeps one checkpoint: the memory after its latest turn (summaries, calibration,
the window of recent messages). Each turn prunes the ones before (`prune_thread`), so a
thread costs the same at turn 2,000 as at turn 20. Any other branch point's memory is
rebuilt by the caller from what the database holds (the messages, and each reply's
ledger: the summaries and window it was given) and handed to the turn as a `seed`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from agent.checkpoint import EMPTY_CHECKPOINT_ID
from agent.graph import get_graph, thread_config
from agent.tokens import message_text


class BranchMemory(TypedDict):
    """What a turn remembers before its question: the state a branch point holds."""

    messages: list[BaseMessage]
    summaries: list[str]
    calibration: float


@dataclass(frozen=True)
class MemoryStart:
    """Where a turn's memory starts: a checkpoint of the thread, or (EMPTY_CHECKPOINT_ID)
    nothing but `seed`."""

    checkpoint_id: str
    seed: BranchMemory | None = None


FRESH = MemoryStart(EMPTY_CHECKPOINT_ID)


@dataclass(frozen=True)
class ThreadRef:
    """The checkpointed thread a turn writes to (a conversation's id), and where its
    memory starts (None: the thread's latest checkpoint)."""

    id: str
    start: MemoryStart | None = None


logger = logging.getLogger(__name__)


class ThreadMessage(TypedDict):
    id: str
    role: str
    content: str


class ThreadMemory(TypedDict):
    thread_id: str
    summaries: list[str]
    messages: list[ThreadMessage]
    message_ids: list[str]
    calibration: float


def _role(message: BaseMessage) -> str:
    """Return the chat role of a stored message."""
    return {"human": "user", "ai": "assistant"}.get(message.type, message.type)


def describe(thread_id: str, values: dict[str, Any]) -> ThreadMemory:
    """Return memory values as plain data (what a page or a test looks at)."""
    messages: list[BaseMessage] = list(values.get("messages", []))
    return {
        "thread_id": thread_id,
        "summaries": list(values.get("summaries", [])),
        "messages": [
            {"id": m.id or "", "role": _role(m), "content": message_text(m)} for m in messages
        ],
        "message_ids": [m.id for m in messages if m.id],
        "calibration": float(values.get("calibration", 1.0)),
    }


async def latest(saver: BaseCheckpointSaver, thread_id: str) -> tuple[str, dict[str, Any]]:
    """Return the id and values of the thread's latest checkpoint ("" and {} if none)."""
    snapshot = await get_graph(saver).aget_state(thread_config(thread_id))
    if not snapshot.values:
        return "", {}
    return str(snapshot.config["configurable"]["checkpoint_id"]), dict(snapshot.values)


async def read_thread(saver: BaseCheckpointSaver, thread_id: str) -> ThreadMemory | None:
    """Return what the agent remembers after the thread's latest turn (None: nothing)."""
    _checkpoint_id, values = await latest(saver, thread_id)
    return describe(thread_id, values) if values else None


def as_branch_memory(values: dict[str, Any], up_to: str | None = None) -> BranchMemory:
    """Return the memory in `values`, cut right after message `up_to` if given."""
    messages: list[BaseMessage] = list(values.get("messages", []))
    if up_to is not None:
        ids = [m.id for m in messages]
        messages = messages[: ids.index(up_to) + 1]
    return {
        "messages": messages,
        "summaries": list(values.get("summaries", [])),
        "calibration": float(values.get("calibration", 1.0)),
    }


async def start_after(
    saver: BaseCheckpointSaver, thread_id: str, message_id: str, *, detached: bool = False
) -> MemoryStart | None:
    """Return where a turn whose memory ends with `message_id` starts, from the latest
    checkpoint: itself when it ends there, its memory cut after the message when it holds
    it (its summaries fold only messages older than its window, all on the message's
    branch); None when it does not hold the message (the caller rebuilds it). `detached`:
    always the memory itself (for a turn written to another thread)."""
    checkpoint_id, values = await latest(saver, thread_id)
    ids = [m.id for m in values.get("messages", [])]
    if not ids or message_id not in ids:
        return None
    if ids[-1] == message_id and not detached:
        return MemoryStart(checkpoint_id)
    return MemoryStart(EMPTY_CHECKPOINT_ID, as_branch_memory(values, message_id))


def turn_input(start: MemoryStart | None, messages: list[BaseMessage]) -> dict[str, Any]:
    """Return the graph input of a turn adding `messages` to the memory it starts from."""
    seed = start.seed if start is not None else None
    if seed is None:
        return {"messages": messages}
    return {
        "messages": [*seed["messages"], *messages],
        "summaries": list(seed["summaries"]),
        "calibration": seed["calibration"],
    }


def run_from(start: MemoryStart | None) -> str | None:
    """Return the checkpoint a turn runs from (None: the thread's latest)."""
    return start.checkpoint_id if start is not None else None


async def record_exchange(
    saver: BaseCheckpointSaver,
    thread_id: str,
    *,
    user_message_id: str,
    user_text: str,
    reply_id: str,
    reply_text: str,
    finish_reason: str,
    start: MemoryStart | None = None,
    replaces: str | None = None,
) -> str:
    """Put a user message and its (partial) reply into a thread, once (ids deduplicate),
    and keep only that checkpoint.

    A turn saves its checkpoint when it ends; a process that died mid-turn saved
    nothing, so whoever finishes that turn records what the user said and saw. It goes
    on top of `start` (the memory the turn ran from; None: the latest); `replaces` is a
    cut-off reply this one continued. Returns the new checkpoint's id.
    """
    config = thread_config(thread_id, checkpoint_id=run_from(start))
    graph = get_graph(saver)
    values = turn_input(start, [HumanMessage(id=user_message_id, content=user_text)])
    messages = values["messages"]
    if replaces:
        held = (await graph.aget_state(config)).values.get("messages", [])
        if any(m.id == replaces for m in [*held, *messages]):
            messages.append(RemoveMessage(id=replaces))
    if reply_text:
        metadata = {"finish_reason": finish_reason}
        messages.append(AIMessage(id=reply_id, content=reply_text, response_metadata=metadata))
    written = await graph.aupdate_state(config, values, as_node="agent")
    await prune_thread(saver, thread_id)
    return str(written["configurable"]["checkpoint_id"])


async def write_thread(saver: BaseCheckpointSaver, thread_id: str, memory: BranchMemory) -> str:
    """Replace the thread's memory with `memory` (a fork's start); return the checkpoint."""
    await saver.adelete_thread(thread_id)
    values = {
        "messages": list(memory["messages"]),
        "summaries": list(memory["summaries"]),
        "calibration": memory["calibration"],
    }
    written = await get_graph(saver).aupdate_state(
        thread_config(thread_id), values, as_node="agent"
    )
    return str(written["configurable"]["checkpoint_id"])


async def prune_thread(saver: BaseCheckpointSaver, thread_id: str) -> bool:
    """Delete every checkpoint of the thread but the latest (and what it references); say
    whether it did. A failure only leaves them for the next turn to prune, and a saver that
    cannot prune (LangGraph's in-memory one, in benchmarks) keeps them."""
    try:
        await saver.aprune([thread_id], strategy="keep_latest")
    except NotImplementedError:
        return False
    except Exception:  # e.g. a serialization failure against a concurrent prune
        logger.warning("could not prune thread %s", thread_id, exc_info=True)
        return False
    return True


async def delete_thread(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """Delete every checkpoint of a thread."""
    await saver.adelete_thread(thread_id)
