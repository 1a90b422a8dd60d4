"""Run the agent for a conversation: rows in, events out, the reply stored as a row.

The agent package never sees Django; this module turns `Message` rows into the agent's
inputs and the agent's events into rows, counters and the context ledger.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.db import transaction

from agent import checkpoint
from agent.config import AgentConfig
from agent.digest import Digest, summarize_conversation
from agent.events import AgentEvent, FinishedEvent
from agent.runner import Turn
from agent.tokens import estimate_tokens
from knowledge.retrieval import aretrieve
from knowledge.selectors import aget_document_section, user_has_documents

from . import services
from .db_async import db_async
from .models import Conversation, Message

EventCallback = Callable[[AgentEvent], Awaitable[None]]
SEARCH_RESULT_LIMIT = 5


def build_agent_config() -> AgentConfig:
    """Return the agent's settings from Django's (SPEC's table)."""
    return AgentConfig(
        model=settings.CHAT_MODEL,
        openai_api_key=settings.OPENAI_API_KEY,
        openai_base_url=settings.OPENAI_BASE_URL,
        context_window=settings.CHAT_CONTEXT_WINDOW,
        compression_threshold=settings.CONTEXT_COMPRESSION_THRESHOLD,
        compression_target=settings.CONTEXT_COMPRESSION_TARGET,
        memory_max_messages=settings.MEMORY_MAX_MESSAGES,
        memory_keep_recent=settings.MEMORY_KEEP_RECENT,
        memory_max_summaries=settings.MEMORY_MAX_SUMMARIES,
        max_iterations=settings.AGENT_MAX_ITERATIONS,
        offline_chars_per_second=settings.OFFLINE_MODEL_CHARS_PER_SECOND,
    )


async def aget_checkpointer():
    """Return this event loop's checkpointer (PostgreSQL or the SQLite file)."""
    return await checkpoint.get_checkpointer(settings.CHECKPOINT_URL)


def _search_other_conversations(user_id: int, exclude_id: uuid.UUID):
    """Return the `search_conversations` tool's backend for one user."""

    @sync_to_async
    def search(query: str, k: int = SEARCH_RESULT_LIMIT) -> list[dict[str, Any]]:
        from .selectors import search_messages_for_agent

        return search_messages_for_agent(
            user_id=user_id, query=query, exclude_conversation_id=exclude_id, limit=k
        )

    return search


def _knowledge_for(user_id: int):
    """Return the retriever and section lookup over one user's documents."""

    async def retriever(query: str, k: int) -> list[dict[str, Any]]:
        return [dict(item) for item in await aretrieve(user_id=user_id, query=query, k=k)]

    async def section_lookup(document: str, section: str) -> dict[str, Any] | None:
        found = await aget_document_section(user_id=user_id, document=document, section=section)
        return dict(found) if found else None

    return retriever, section_lookup


async def arun_agent_turn(
    *,
    conversation: Conversation,
    user_message: Message,
    reply_id: uuid.UUID,
    on_event: EventCallback,
) -> Message:
    """Run one agent turn answering `user_message`; store and return the assistant message.

    Every agent event is awaited through `on_event` as it happens (thinking, token,
    sources, and finished once the reply is stored; the stored reply is announced to
    the conversation's sockets right after `finished`). If the task running this is
    cancelled, the partial reply is stored with finish_reason "stopped" before
    CancelledError propagates.
    """
    owner_id = conversation.created_by_id
    retriever, section_lookup = _knowledge_for(owner_id)
    turn = Turn(
        config=build_agent_config(),
        checkpointer=await aget_checkpointer(),
        thread_id=str(conversation.id),
        user_message_id=str(user_message.id),
        user_text=user_message.content,
        reply_id=str(reply_id),
        retriever=retriever,
        has_documents=await _owner_has_documents(conversation),
        section_lookup=section_lookup,
        search_conversations=_search_other_conversations(owner_id, conversation.id),
    )
    finished: FinishedEvent | None = None
    try:
        async for event in turn.events():
            if event["type"] == "finished":
                finished = event
            else:
                await on_event(event)
    except asyncio.CancelledError:
        if turn.finished is not None:
            # Shielded: a second cancel must not lose what the user already saw.
            await asyncio.shield(astore_reply(conversation.id, turn.finished))
        raise
    assert finished is not None, "a turn always ends with a finished event"
    message = await astore_reply(conversation.id, finished)
    await on_event(finished)  # first: a streaming caller sends the text it still holds
    await services.aannounce_message(message)
    # After the reply is out, so the conversation summary never delays it.
    from .summaries import maybe_auto_summarize

    await maybe_auto_summarize(conversation.id, current=message.conversation)
    return message


@transaction.atomic
def store_reply(conversation_id: Any, finished: FinishedEvent) -> Message:
    """Store the assistant message a finished turn describes (idempotent on its id).

    If the reply held the conversation's reply slot (its id is the run's), the slot is
    freed in the same transaction. The message's `conversation` is the row as written.
    """
    conversation = services.lock_conversation(conversation_id)
    existing = Message.objects.filter(pk=finished["message_id"]).first()
    if existing is not None:
        existing.conversation = conversation
        return existing
    release: tuple[str, ...] = ()
    if str(conversation.active_run_id) == finished["message_id"]:
        conversation.active_run_id = conversation.active_run_heartbeat = None
        release = ("active_run_id", "active_run_heartbeat")
    usage = finished["usage"]
    metadata = {"context": finished["context"], "usage": dict(usage)}
    if finished.get("error"):
        metadata["error"] = finished["error"]
    return services.insert_message(
        conversation,
        role=Message.Role.ASSISTANT,
        content=finished["content"],
        parts=finished["parts"],
        model=finished["model"],
        tokens_used=usage.get("output_tokens") or estimate_tokens(finished["content"]),
        finish_reason=finished["finish_reason"],
        metadata=metadata,
        message_id=finished["message_id"],
        also_save=release,
    )


astore_reply = db_async(store_reply, close_serial=False)
_has_documents = db_async(user_has_documents, close_serial=False)


async def _owner_has_documents(conversation: Conversation) -> bool:
    """Say whether the owner has documents (read with the conversation when it was claimed)."""
    known = getattr(conversation, "owner_has_documents", None)
    if known is not None:
        return bool(known)
    return await _has_documents(conversation.created_by_id)


async def aclose_agent_resources() -> None:
    """Close this event loop's checkpointer (its connection threads keep a process alive)."""
    await checkpoint.close_checkpointers()


async def acopy_agent_thread(*, source_id: Any, target_id: Any, up_to_message_id: Any) -> bool:
    """Give conversation `target_id` the agent memory of `source_id` as of one message.

    Returns False when the source thread never held that message (e.g. it was imported),
    in which case the fork starts with no agent memory beyond its copied rows.
    """
    saver = await aget_checkpointer()
    try:
        await checkpoint.copy_thread(saver, str(source_id), str(target_id), str(up_to_message_id))
    except LookupError:
        return False
    return True


async def aremove_agent_message(*, conversation_id: Any, message_id: Any) -> bool:
    """Remove one message from the agent's memory of a conversation."""
    saver = await aget_checkpointer()
    return await checkpoint.remove_message(saver, str(conversation_id), str(message_id))


def _message_before(message: Message) -> Message | None:
    return Message.objects.filter(
        conversation_id=message.conversation_id,
        sequence_number=message.sequence_number - 1,
        role=Message.Role.USER,
    ).first()


async def arecord_cut_off_turn(reply: Message) -> None:
    """Give the agent's memory a turn whose process died: the question and the partial reply."""
    question = await db_async(_message_before, close_serial=False)(reply)
    if question is None:
        return
    await checkpoint.record_exchange(
        await aget_checkpointer(),
        str(reply.conversation_id),
        user_message_id=str(question.pk),
        user_text=question.content,
        reply_id=str(reply.pk),
        reply_text=reply.content,
        finish_reason=reply.finish_reason,
    )


async def aread_agent_memory(conversation_id: Any) -> checkpoint.ThreadMemory | None:
    """Return what the agent remembers of a conversation."""
    return await checkpoint.read_thread(await aget_checkpointer(), str(conversation_id))


async def adelete_agent_thread(conversation_id: Any) -> None:
    """Drop the agent's checkpointed thread of a deleted conversation."""
    # A short-lived saver: this may run on a loop made just for it (from sync code).
    saver = await checkpoint.open_checkpointer(settings.CHECKPOINT_URL)
    try:
        await checkpoint.delete_thread(saver, str(conversation_id))
    finally:
        await checkpoint.close_checkpointer(saver)


def delete_agent_thread(conversation_id: Any) -> None:
    """Drop the agent's thread from synchronous code."""
    async_to_sync(adelete_agent_thread)(conversation_id)


async def asummarize_digest(*, messages: list[Message], max_words: int | None = None) -> Digest:
    """Return the three parts (main points, decisions, next actions) of `messages`."""
    turns = [(m.role, m.content) for m in messages if m.role in ("user", "assistant")]
    return await summarize_conversation(build_agent_config(), turns, max_words=max_words or 200)


async def asummarize_for_conversation(
    *, messages: list[Message], max_words: int | None = None
) -> str:
    """Return a three-part summary of `messages` as Markdown."""
    digest = await asummarize_digest(messages=messages, max_words=max_words)
    return digest["text"]
