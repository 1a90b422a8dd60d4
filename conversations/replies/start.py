"""A new conversation from the composer or the API: created alone, or stored with its first
message in the reply's claim (nothing refused leaves a conversation behind)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async

from .. import services
from ..models import Conversation
from ..schemas import MessageIn
from ..services import NewConversation
from .ask import Ask
from .orchestrator import StartedReply, start_reply


async def start_conversation(
    *, user: Any, new: NewConversation, message: MessageIn | None = None
) -> tuple[Conversation, StartedReply | None]:
    """Create `new` and, with its first `message`, store that message and start the reply
    (on the running loop, which must be the server's)."""
    if message is None:
        return await sync_to_async(services.create_new_conversation)(user=user, new=new), None
    started = await start_reply(user=user, ask=Ask(message=message), new_conversation=new)
    assert started.conversation is not None
    return started.conversation, started
