"""A conversation's agent thread (its checkpointed memory) through its life: copied into a
fork, told about a reply cut off by a crash, read back, deleted with the conversation."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from asgiref.sync import AsyncToSync, async_to_sync
from django.conf import settings

from agent import checkpoint, threads
from agent.threads import MemoryStart
from core.db_async import db_async

from ..models import Conversation, Message
from .branch_memory import branch_memory

logger = logging.getLogger(__name__)


async def aget_checkpointer():
    """Return this event loop's checkpointer (PostgreSQL or the SQLite file)."""
    return await checkpoint.get_checkpointer(settings.CHECKPOINT_URL)


async def aclose_agent_resources() -> None:
    """Close this event loop's checkpointer (its connection threads keep a process alive)."""
    await checkpoint.close_checkpointers()


async def acopy_agent_thread(*, source_id: Any, target_id: Any, up_to: Message) -> None:
    """Give fork `target_id` the agent memory `source_id` had right after `up_to`, its
    messages named by the fork's copies (same sequence numbers), so the fork's first turn
    starts from it like any next turn."""
    saver = await aget_checkpointer()
    _checkpoint_id, values = await threads.latest(saver, str(source_id))
    if any(m.id == str(up_to.pk) for m in values.get("messages", [])):
        memory = threads.as_branch_memory(values, str(up_to.pk))
    else:
        memory = await _abranch_memory(up_to.pk)
    copies = await _acopy_ids(source_id, target_id)
    memory["messages"] = [
        m.model_copy(update={"id": copies[m.id]}) if m.id in copies else m
        for m in memory["messages"]
    ]
    await threads.write_thread(saver, str(target_id), memory)


def _copy_ids(source_id: Any, target_id: Any) -> dict[str, str]:
    """Return {source message id: the fork's copy} (a fork keeps sequence numbers)."""
    copies = dict(
        Message.objects.filter(conversation_id=target_id).values_list("sequence_number", "pk")
    )
    source = Message.objects.filter(conversation_id=source_id, sequence_number__in=list(copies))
    return {str(pk): str(copies[n]) for pk, n in source.values_list("pk", "sequence_number")}


_acopy_ids = db_async(_copy_ids)


async def arecord_cut_off_turn(*, question: Message, reply: Message) -> None:
    """Give the agent's memory a turn whose process died: the question and the partial
    reply, on the question's branch."""
    parent = await _aparent(question)
    await threads.record_exchange(
        await aget_checkpointer(),
        str(reply.conversation_id),
        user_message_id=str(question.pk),
        user_text=question.content,
        reply_id=str(reply.pk),
        reply_text=reply.content,
        finish_reason=reply.finish_reason,
        start=await amemory_start(conversation_id=reply.conversation_id, resume_after=parent),
    )


def _parent(message: Message) -> Message | None:
    return Message.objects.filter(pk=message.parent_id).first() if message.parent_id else None


_aparent = db_async(_parent)


async def aread_agent_memory(conversation: Conversation) -> threads.ThreadMemory | None:
    """Return what the agent remembers on the conversation's current branch."""
    leaf = await _acurrent_message(conversation)
    saver = await aget_checkpointer()
    if leaf is None:
        return await threads.read_thread(saver, str(conversation.pk))
    start = await amemory_start(conversation_id=conversation.pk, resume_after=leaf)
    if start.seed is not None:
        return threads.describe(str(conversation.pk), dict(start.seed))
    return await threads.read_thread(saver, str(conversation.pk))


def _current_message(conversation: Conversation) -> Message | None:
    pk = conversation.current_message_id
    return Message.objects.filter(pk=pk).first() if pk else None


_acurrent_message = db_async(_current_message)


async def adelete_agent_thread(conversation_id: Any) -> None:
    """Drop the agent's checkpointed thread of a deleted conversation."""
    if asyncio.get_running_loop() not in AsyncToSync.loop_thread_executors:
        # The server's loop (a request's `async_to_sync` runs here too): its own saver, so
        # fifty deletes at once stay within the pool's POOL_MAX_SIZE connections.
        await threads.delete_thread(await aget_checkpointer(), str(conversation_id))
        return
    # A loop made just for this call (sync code with no server loop): a short-lived saver.
    saver = await checkpoint.open_checkpointer(settings.CHECKPOINT_URL)
    try:
        await threads.delete_thread(saver, str(conversation_id))
    finally:
        await checkpoint.close_checkpointer(saver)


def delete_agent_thread(conversation_id: Any) -> None:
    """Drop the agent's thread from synchronous code."""
    async_to_sync(adelete_agent_thread)(conversation_id)


_abranch_memory = db_async(branch_memory)


def side_thread_id(conversation_id: Any, run_id: Any) -> str:
    """The thread the second reply of a side-by-side pair writes to (its own, dropped when
    it is stored): the conversation's keeps the first's. Its memory is in its ledger, so
    choosing it goes on from there like any other branch (branch_memory.py)."""
    return f"{conversation_id}/side/{run_id}"


async def adrop_side_thread(conversation_id: Any, run_id: Any) -> None:
    """Drop a side-by-side reply's own thread once the reply is stored (never raises)."""
    try:
        await adelete_agent_thread(side_thread_id(conversation_id, run_id))
    except Exception:
        logger.warning("reply %s: could not drop its side thread", run_id)


async def amemory_start(
    *, conversation_id: Any, resume_after: Message | None, detached: bool = False
) -> MemoryStart:
    """Return where a turn's memory starts: the thread's latest checkpoint when it holds
    `resume_after` (the usual next message), else memory rebuilt from the rows.
    `detached`: the memory itself, never a checkpoint (a side-by-side turn's own thread)."""
    if resume_after is None:
        return threads.FRESH
    saver = await aget_checkpointer()
    start = await threads.start_after(
        saver, str(conversation_id), str(resume_after.pk), detached=detached
    )
    if start is not None:
        return start
    seed = await _abranch_memory(resume_after.pk)
    return MemoryStart(checkpoint.EMPTY_CHECKPOINT_ID, seed)
