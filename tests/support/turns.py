"""Run a reply through the orchestrator, as a socket's `message.send` does, and watch it."""

from __future__ import annotations

from typing import Any

from conversations.realtime.hub import get_hub
from conversations.replies import start_reply
from tests.support.sink import Sink


async def ask(user: Any, conversation: Any, **ask: Any) -> tuple[Any, list[dict]]:
    """Start a reply (send by default) and return the stored reply and its frames."""
    hub, sink = get_hub(), Sink()
    await hub.join(conversation.id, sink)
    started = await start_reply(user=user, conversation_id=conversation.id, **ask)
    reply = await started.assistant_message()
    await hub.flushed(conversation.id)
    await hub.leave(conversation.id, sink)
    return reply, sink.frames
