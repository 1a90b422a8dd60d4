"""The adapter between rows and the agent: build a turn, map its ending, manage threads.

The agent package never sees Django; this module turns `Message` rows into the agent's
inputs and a finished turn into the fields of the reply's row (content, parts, context
ledger). It writes no rows and announces nothing: the reply orchestrator
(conversations/replies/) stores and announces what a turn produced.
"""

from __future__ import annotations

import uuid
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings

from accounts.models import UserSettings
from agent import checkpoint, threads
from agent.config import AgentConfig
from agent.digest import Digest, summarize_conversation
from agent.events import FinishedEvent
from agent.runner import Turn
from agent.threads import MemoryStart
from agent.tokens import estimate_tokens
from core.db_async import db_async
from core.llm_catalog import ModelInfo, amodel_in_force, model_in_force
from knowledge.hybrid import aretrieve
from knowledge.selectors import aget_document_section, user_has_documents
from memories.services import AgentMemory

from .attachments import image_data_url
from .branch_memory import branch_memory
from .models import TOKENS_ESTIMATED, Attachment, Conversation, Message
from .recall import branch_recall

SEARCH_RESULT_LIMIT = 5


def build_agent_config(
    model: ModelInfo | None = None, *, temperature: float | None = None
) -> AgentConfig:
    """Return the agent's settings from Django's (SPEC's table) for one model (default:
    the site's): its context window is the one the memory rules measure against."""
    if model is None:
        model = model_in_force()
    return AgentConfig(
        model=model.id,
        temperature=temperature,
        openai_api_key=settings.OPENAI_API_KEY,
        openai_base_url=settings.OPENAI_BASE_URL,
        context_window=model.context_window,
        compression_threshold=settings.CONTEXT_COMPRESSION_THRESHOLD,
        compression_target=settings.CONTEXT_COMPRESSION_TARGET,
        memory_max_messages=settings.MEMORY_MAX_MESSAGES,
        memory_keep_recent=settings.MEMORY_KEEP_RECENT,
        memory_max_summaries=settings.MEMORY_MAX_SUMMARIES,
        max_iterations=settings.AGENT_MAX_ITERATIONS,
        memory_recall_k=settings.MEMORY_RECALL_K,
        recall_max_tokens=settings.MEMORY_RECALL_TOKENS,
        offline_chars_per_second=settings.OFFLINE_MODEL_CHARS_PER_SECOND,
        vision=model.vision,
        first_byte_timeout=settings.CHAT_MODEL_FIRST_BYTE_TIMEOUT or None,
        idle_timeout=settings.CHAT_MODEL_IDLE_TIMEOUT or None,
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


def _knowledge_for(user_id: int, scope: Any = None):
    """Return the retriever and section lookup over one user's documents: the knowledge
    base and, in conversation `scope`, the documents attached there."""

    async def retriever(query: str, k: int) -> list[dict[str, Any]]:
        found = await aretrieve(user_id=user_id, query=query, k=k, scope=scope)
        return [dict(item) for item in found]

    async def section_lookup(document: str, section: str) -> dict[str, Any] | None:
        found = await aget_document_section(
            user_id=user_id, document=document, section=section, scope=scope
        )
        return dict(found) if found else None

    return retriever, section_lookup


_abranch_memory = db_async(branch_memory)


async def amemory_start(*, conversation_id: Any, resume_after: Message | None) -> MemoryStart:
    """Return where a turn's memory starts: the thread's latest checkpoint when it holds
    `resume_after` (the usual next message), else memory rebuilt from the rows."""
    if resume_after is None:
        return threads.FRESH
    saver = await aget_checkpointer()
    start = await threads.start_after(saver, str(conversation_id), str(resume_after.pk))
    if start is not None:
        return start
    seed = await _abranch_memory(resume_after.pk)
    return MemoryStart(checkpoint.EMPTY_CHECKPOINT_ID, seed)


def _owner_settings(conversation: Conversation) -> tuple[str, str, bool]:
    """Return the owner's default model, custom instructions and whether memory is on
    (read with the conversation when it was claimed, else asked now)."""
    if hasattr(conversation, "owner_default_model"):
        return (
            conversation.owner_default_model or "",
            conversation.owner_instructions or "",
            getattr(conversation, "owner_memory_enabled", None) is not False,
        )
    found = UserSettings.objects.filter(user_id=conversation.created_by_id).first()
    if found is None:
        return "", "", True
    return found.default_model, found.custom_instructions, found.memory_enabled


_aowner_settings = db_async(_owner_settings, close_serial=False)


def join_instructions(*blocks: str) -> str:
    """Return the user's standing instructions, then the conversation's (which win)."""
    return "\n\n".join(block.strip() for block in blocks if block and block.strip())


async def aowner_settings(conversation: Conversation) -> tuple[str, str, bool]:
    """Return the owner's default model, custom instructions and memory switch."""
    if hasattr(conversation, "owner_default_model"):
        return _owner_settings(conversation)
    return await _aowner_settings(conversation)


async def aconversation_config(
    conversation: Conversation, *, model: str | None = None
) -> tuple[AgentConfig, str]:
    """Return the agent's settings and the instructions in force for a conversation:
    `model` (one reply's choice), else its own, else the owner's default, else the site's."""
    default_model, custom, _memory = await aowner_settings(conversation)
    info = await amodel_in_force(model, conversation.model, default_model)
    config = build_agent_config(info, temperature=conversation.temperature)
    return config, join_instructions(custom, conversation.system_prompt)


async def astart_turn(
    *,
    conversation: Conversation,
    user_message: Message,
    reply_id: uuid.UUID,
    resume_after: Message | None = None,
    continues: Message | None = None,
    model: str | None = None,
) -> Turn:
    """Return the agent turn answering `user_message` on its branch (iterate
    `turn.events()` to run it): its memory is the branch down to `resume_after`;
    `model` answers this once instead of the conversation's."""
    owner_id = conversation.created_by_id
    retriever, section_lookup = _knowledge_for(owner_id, conversation.pk)
    start = await amemory_start(conversation_id=conversation.pk, resume_after=resume_after)
    config, instructions = await aconversation_config(conversation, model=model)
    _model, _custom, memory_on = await aowner_settings(conversation)
    # A temporary conversation neither reads nor saves memories (no remember tool).
    memory = (
        AgentMemory(
            user_id=owner_id,
            conversation_id=conversation.pk,
            message_id=user_message.pk,
            said=user_message.content,
        )
        if memory_on and not conversation.temporary
        else None
    )
    return Turn(
        config=config,
        instructions=instructions,
        checkpointer=await aget_checkpointer(),
        start=start,
        continues=(str(continues.pk), continues.content) if continues is not None else None,
        thread_id=str(conversation.id),
        user_message_id=str(user_message.id),
        user_text=user_message.content,
        reply_id=str(reply_id),
        retriever=retriever,
        has_documents=await _owner_has_documents(conversation),
        section_lookup=section_lookup,
        search_conversations=_search_other_conversations(owner_id, conversation.id),
        images=await _aimages_of(user_message, vision=config.vision),
        memory=memory,
        recall_messages=branch_recall(conversation.pk, user_message.pk),
    )


def _images_of(message: Message, *, vision: bool) -> tuple[tuple[str, str], ...]:
    """The images sent with `message`: (name, data URL) for a vision model, else (name, "")."""
    rows = Attachment.objects.filter(message=message, kind=Attachment.Kind.IMAGE).order_by(
        "created_at", "id"
    )
    return tuple((a.name, image_data_url(a) if vision else "") for a in rows)


_aimages_of = db_async(_images_of, close_serial=False)


def reply_fields(finished: FinishedEvent, *, continues: Message | None = None) -> dict[str, Any]:
    """Return the assistant message's fields for a finished turn (the ledger included).

    Its tokens are the output tokens the model server reported, or our estimate of the
    text (marked `tokens_estimated`). A continued reply holds the cut-off reply's text
    and this turn's, so its tokens are both parts' (an estimate if either part's is)."""
    usage = finished["usage"]
    metadata: dict[str, Any] = {"context": finished["context"], "usage": dict(usage)}
    if finished.get("error"):
        metadata["error"] = finished["error"]
    tokens = int(usage.get("output_tokens") or 0)
    estimated = bool(finished["context"].get("usage_estimated")) or (
        not tokens and bool(finished["content"])
    )
    tokens = tokens or estimate_tokens(finished["content"])
    if continues is not None:
        metadata["continued"] = {"from": str(continues.pk), "tokens": continues.tokens_used}
        tokens += continues.tokens_used
        estimated = estimated or continues.tokens_estimated
    if estimated:
        metadata[TOKENS_ESTIMATED] = True
    return {
        "content": finished["content"],
        "finish_reason": finished["finish_reason"],
        "parts": finished["parts"],
        "model": finished["model"],
        "tokens_used": tokens,
        "metadata": metadata,
    }


_has_documents = db_async(user_has_documents, close_serial=False)


async def _owner_has_documents(conversation: Conversation) -> bool:
    """Say whether the owner has documents (read with the conversation when it was claimed)."""
    known = getattr(conversation, "owner_has_documents", None)
    if known is not None:
        return bool(known)
    return await _has_documents(conversation.created_by_id, conversation.pk)


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
    # A short-lived saver: this may run on a loop made just for it (from sync code).
    saver = await checkpoint.open_checkpointer(settings.CHECKPOINT_URL)
    try:
        await threads.delete_thread(saver, str(conversation_id))
    finally:
        await checkpoint.close_checkpointer(saver)


def delete_agent_thread(conversation_id: Any) -> None:
    """Drop the agent's thread from synchronous code."""
    async_to_sync(adelete_agent_thread)(conversation_id)


async def asummarize_digest(
    *,
    messages: list[Message],
    max_words: int | None = None,
    conversation: Conversation | None = None,
) -> Digest:
    """Return the three parts (main points, decisions, next actions) of `messages`,
    written by the conversation's model."""
    turns = [(m.role, m.content) for m in messages if m.role in ("user", "assistant")]
    if conversation is not None:
        config, _instructions = await aconversation_config(conversation)
    else:
        config = build_agent_config(await amodel_in_force())
    return await summarize_conversation(config, turns, max_words=max_words or 200)


async def asummarize_for_conversation(
    *,
    messages: list[Message],
    max_words: int | None = None,
    conversation: Conversation | None = None,
) -> str:
    """Return a three-part summary of `messages` as Markdown."""
    digest = await asummarize_digest(
        messages=messages, max_words=max_words, conversation=conversation
    )
    return digest["text"]
