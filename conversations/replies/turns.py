"""The adapter between rows and the agent's turns: build a turn from a conversation's rows
and settings, and map a finished turn to the fields of the reply's row.

The agent package never sees Django; this module turns `Message` rows into the agent's
inputs and a finished turn into the fields of the reply's row (content, parts, context
ledger). It writes no rows and announces nothing: the reply orchestrator
(conversations/replies/) stores and announces what a turn produced.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from langchain_core.tools import BaseTool

from accounts.models import UserSettings
from agent.config import AgentConfig
from agent.events import FinishedEvent
from agent.llm import get_chat_model
from agent.runner import Turn
from agent.state import AgentContext, Question
from agent.threads import ThreadRef
from agent.tokens import estimate_tokens
from core import rows
from core.db_async import db_async
from core.models_on_offer import ModelInfo, amodel_in_force, model_in_force
from knowledge.hybrid import aretrieve
from knowledge.models import Document
from knowledge.selectors import aget_document_section, user_has_documents
from memories.services import AgentMemory
from presets.selectors import NO_PRESET, PresetSettings, settings_of
from toolbox import tool_catalog
from toolbox.servers import list_servers

from ..attachments import image_data_url
from ..models import TOKENS_ESTIMATED, Attachment, Conversation, Message
from ..search import search_other_conversations
from . import threads as conversation_threads
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


def _search_other_conversations(user_id: int, exclude_id: uuid.UUID):
    """Return the `search_conversations` tool's backend for one user."""

    async def search(query: str, k: int = SEARCH_RESULT_LIMIT) -> list[dict[str, Any]]:
        return await _asearch_other_conversations(
            user_id=user_id, query=query, exclude_conversation_id=exclude_id, limit=k
        )

    return search


_asearch_other_conversations = db_async(search_other_conversations, close_serial=False)


def _knowledge_for(user_id: int, scope: Any = None, documents: tuple[str, ...] | None = None):
    """Return the retriever and section lookup over one user's documents: the knowledge
    base (or only `documents`: a preset's) and, in conversation `scope`, the documents
    attached there."""

    async def retriever(query: str, k: int) -> list[dict[str, Any]]:
        found = await aretrieve(user_id=user_id, query=query, k=k, scope=scope, documents=documents)
        return [dict(item) for item in found]

    async def section_lookup(document: str, section: str) -> dict[str, Any] | None:
        found = await aget_document_section(
            user_id=user_id, document=document, section=section, scope=scope, documents=documents
        )
        return dict(found) if found else None

    return retriever, section_lookup


@dataclass(frozen=True)
class OwnerSettings:
    """What a conversation's owner chose for all their conversations."""

    default_model: str = ""
    instructions: str = ""
    memory_enabled: bool = True
    tools_enabled: list[str] | None = None  # None: the site's defaults


def _owner_settings(conversation: Conversation) -> OwnerSettings:
    """Return the owner's settings (read with the conversation when it was claimed, else
    asked now)."""
    if hasattr(conversation, "owner_default_model"):
        return OwnerSettings(
            conversation.owner_default_model or "",
            conversation.owner_instructions or "",
            getattr(conversation, "owner_memory_enabled", None) is not False,
            getattr(conversation, "owner_tools_enabled", None),
        )
    found = UserSettings.objects.filter(user_id=conversation.created_by_id).first()
    if found is None:
        return OwnerSettings()
    return OwnerSettings(
        found.default_model, found.custom_instructions, found.memory_enabled, found.tools_enabled
    )


_aowner_settings = db_async(_owner_settings, close_serial=False)


def join_instructions(*blocks: str) -> str:
    """Return the user's standing instructions, then the conversation's (which win)."""
    return "\n\n".join(block.strip() for block in blocks if block and block.strip())


async def aowner_settings(conversation: Conversation) -> OwnerSettings:
    """Return the owner's default model, custom instructions, memory and tool switches."""
    if hasattr(conversation, "owner_default_model"):
        return _owner_settings(conversation)
    return await _aowner_settings(conversation)


async def apreset_of(conversation: Conversation) -> PresetSettings | None:
    """Return the settings of the preset the conversation was started from, as it is now
    (None: none, deleted, or no longer shared); asked once per conversation object."""
    if conversation.preset_id is None:
        return None
    if "preset_settings" not in conversation.__dict__:
        conversation.__dict__["preset_settings"] = await _asettings_of(
            conversation.preset_id, user_id=conversation.created_by_id
        )
    return conversation.__dict__["preset_settings"]


_asettings_of = db_async(settings_of, close_serial=False)


async def aconversation_config(
    conversation: Conversation, *, model: str | None = None
) -> tuple[AgentConfig, str]:
    """Return the agent's settings and the instructions in force for a conversation:
    `model` (one reply's choice), else its own, else its preset's, else the owner's
    default, else the site's; the owner's instructions, the preset's, then its own."""
    owner = await aowner_settings(conversation)
    preset = await apreset_of(conversation) or NO_PRESET
    info = await amodel_in_force(model, conversation.model, preset.model, owner.default_model)
    temperature = conversation.temperature
    config = build_agent_config(
        info, temperature=preset.temperature if temperature is None else temperature
    )
    instructions = join_instructions(
        owner.instructions, preset.instructions, conversation.system_prompt
    )
    return config, instructions


def _preset_documents(owner_id: int, preset: PresetSettings) -> tuple[str, ...] | None:
    """Return the ids of the documents a preset's conversations search (None: all the
    owner's): chosen ones, or those attached in the conversations of one project."""
    if preset.knowledge_scope == "documents":
        return preset.knowledge_ids
    if preset.knowledge_scope == "project":
        in_project = Conversation.objects.filter(
            created_by_id=owner_id, project_id=int(preset.knowledge_ids[0])
        ).values("id")
        documents = Document.objects.filter(owner_id=owner_id, scope__in=in_project)
        return tuple(str(pk) for pk in documents.values_list("id", flat=True))
    return None


_apreset_documents = db_async(_preset_documents, close_serial=False)


async def astart_turn(
    *,
    conversation: Conversation,
    user_message: Message,
    reply_id: uuid.UUID,
    resume_after: Message | None = None,
    continues: Message | None = None,
    model: str | None = None,
    side_thread: bool = False,
) -> Turn:
    """Return the agent turn answering `user_message` on its branch (iterate
    `turn.events()` to run it): its memory is the branch down to `resume_after`;
    `model` answers this once instead of the conversation's; `side_thread`: the second
    reply of a side-by-side pair, written to its own thread."""
    owner_id = conversation.created_by_id
    preset = await apreset_of(conversation) or NO_PRESET
    documents = None  # most turns: all the owner's documents, no database call
    if preset.knowledge_scope != "all":
        documents = await _apreset_documents(owner_id, preset)
    retriever, section_lookup = _knowledge_for(owner_id, conversation.pk, documents)
    start = await conversation_threads.amemory_start(
        conversation_id=conversation.pk, resume_after=resume_after, detached=side_thread
    )
    thread_id = str(conversation.pk)
    if side_thread:
        thread_id = conversation_threads.side_thread_id(conversation.pk, reply_id)
    config, instructions = await aconversation_config(conversation, model=model)
    owner = await aowner_settings(conversation)
    # A temporary conversation neither reads nor saves memories (no remember tool).
    memory = (
        AgentMemory(
            user_id=owner_id,
            conversation_id=conversation.pk,
            message_id=user_message.pk,
            said=user_message.content,
        )
        if owner.memory_enabled and not conversation.temporary
        else None
    )
    context = AgentContext(
        config=config,
        llm=get_chat_model(config),
        reply_id=str(reply_id),
        instructions=instructions,
        continues=(str(continues.pk), continues.content) if continues is not None else None,
        retriever=retriever,
        has_documents=await _owner_has_documents(conversation, documents),
        section_lookup=section_lookup,
        search_conversations=_search_other_conversations(owner_id, conversation.id),
        images=await _aimages_of(user_message, vision=config.vision),
        memory=memory,
        recall_messages=branch_recall(conversation.pk, user_message.pk),
        extra_tools=tuple(
            await _atools_on(
                preset.tools if conversation.tools is None else conversation.tools,
                owner.tools_enabled,
                owner=owner_id,
            )
        ),
    )
    return Turn(
        context,
        thread=ThreadRef(thread_id, start),
        question=Question(str(user_message.id), user_message.content),
        checkpointer=await conversation_threads.aget_checkpointer(),
    )


async def _atools_on(conversation_tools: Any, owner_tools: Any, *, owner: Any) -> list[BaseTool]:
    """Return the tools switched on for a conversation (toolbox.tool_catalog decides which)."""
    ids = tool_catalog.enabled_ids(conversation_tools=conversation_tools, user_tools=owner_tools)
    if not ids:
        return []  # most turns: no database call at all
    return tool_catalog.build_tools(ids, await _alist_servers(), owner=str(owner))


_alist_servers = db_async(list_servers, close_serial=False)


def _images_of(message: Message, *, vision: bool) -> tuple[tuple[str, str], ...]:
    """The images sent with `message`: (name, data URL) for a vision model, else (name, "")."""
    key = rows.param(Attachment, "message", message.pk)
    found = rows.fetch_all(Attachment, _IMAGES_SQL, [key, Attachment.Kind.IMAGE])
    return tuple((a.name, image_data_url(a) if vision else "") for a in found)


# Asked at every turn's start (core/rows.py).
_IMAGES_SQL = f"""SELECT * FROM {Attachment._meta.db_table}
WHERE message_id = %s AND kind = %s ORDER BY created_at, id"""


_aimages_of = db_async(_images_of, close_serial=False)


def _pictures_drawn(parts: list[dict[str, Any]]) -> int:
    """How many pictures the turn's `generate_image` calls made."""
    return sum(
        1
        for part in parts
        if part.get("type") == "tool_result"
        and part.get("name") == "generate_image"
        and not part.get("is_error")
    )


def reply_fields(finished: FinishedEvent, *, continues: Message | None = None) -> dict[str, Any]:
    """Return the assistant message's fields for a finished turn (the ledger included).

    Its tokens are the output tokens the model server reported, or our estimate of the
    text (marked `tokens_estimated`). A continued reply holds the cut-off reply's text
    and this turn's, so its tokens are both parts' (an estimate if either part's is)."""
    usage = dict(finished["usage"])
    metadata: dict[str, Any] = {"context": finished["context"], "usage": usage}
    if finished.get("error"):
        metadata["error"] = finished["error"]
    tokens = int(usage.get("output_tokens") or 0)
    estimated = bool(finished["context"].get("usage_estimated")) or (
        not tokens and bool(finished["content"])
    )
    tokens = tokens or estimate_tokens(finished["content"])
    pictures = _pictures_drawn(finished["parts"])
    if pictures:  # each counts CHAT_IMAGE_TOKENS output tokens (budgets read `usage`)
        usage["image_tokens"] = pictures * settings.CHAT_IMAGE_TOKENS
        usage["output_tokens"] = int(usage.get("output_tokens") or 0) + usage["image_tokens"]
        tokens += usage["image_tokens"]
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
        "images": list(finished.get("images") or []),
    }


_auser_has_documents = db_async(user_has_documents, close_serial=False)


async def _owner_has_documents(
    conversation: Conversation, documents: tuple[str, ...] | None = None
) -> bool:
    """Say whether the owner has documents to search here (read with the conversation when
    it was claimed, unless a preset chose which)."""
    known = getattr(conversation, "owner_has_documents", None)
    if known is not None and documents is None:
        return bool(known)
    return await _auser_has_documents(conversation.created_by_id, conversation.pk, documents)
