"""Run the agent for a conversation: rows in, events out, the reply stored as a row.

The agent package never sees Django; this module turns `Message` rows into the agent's
inputs and the agent's events into rows, counters and the context ledger.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from agent.config import AgentConfig
from agent.events import AgentEvent
from django.conf import settings

from .models import Conversation, Message

EventCallback = Callable[[AgentEvent], Awaitable[None]]


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
    )


async def arun_agent_turn(
    *,
    conversation: Conversation,
    user_message: Message,
    reply_id: uuid.UUID,
    on_event: EventCallback,
) -> Message:
    """Run one agent turn answering `user_message`; store and return the assistant message.

    Every agent event is awaited through `on_event` as it happens (thinking, token,
    sources, finished). If the task running this is cancelled, the partial reply is
    stored with finish_reason "stopped" before CancelledError propagates.
    """
    raise NotImplementedError("wired up when agent.runner lands")


async def acopy_agent_thread(*, source_id: Any, target_id: Any, up_to_message_id: Any) -> None:
    """Give conversation `target_id` the agent memory of `source_id` as of one message."""
    raise NotImplementedError("wired up when agent.checkpoint lands")


async def aremove_agent_message(*, conversation_id: Any, message_id: Any) -> None:
    """Remove one message from the agent's memory of a conversation."""
    raise NotImplementedError("wired up when agent.checkpoint lands")


def delete_agent_thread(conversation_id: Any) -> None:
    """Drop the agent's checkpointed thread of a deleted conversation."""
    raise NotImplementedError("wired up when agent.checkpoint lands")


async def asummarize_for_conversation(
    *, messages: list[Message], max_words: int | None = None
) -> str:
    """Return a three-part summary (main points, decisions, next actions) of `messages`."""
    raise NotImplementedError("wired up when agent.llm lands")
