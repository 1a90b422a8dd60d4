"""The conversation socket (SPEC: WebSocket /ws/conversations/<id>/); thin over realtime.

Frames are handled one at a time, so no handler awaits a reply: `message.send` only
stores the message and starts the reply, which runs as a task owned by the process.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, get_args

from django.conf import settings
from django.utils.translation import gettext as _
from pydantic import ValidationError

from accounts.tokens import live_token_ids
from core import schemas
from core.db_async import db_async
from core.errors import NotFound, RateLimited, SensitiveInfo, ServiceError
from core.ids import parse_uuid
from core.schemas import first_error

from . import events, temporary
from .branches import switch_branch
from .realtime.backlog import unread_bytes
from .realtime.frames import (
    CLIENT_FRAME,
    CLIENT_FRAME_TYPES,
    BranchSwitchFrame,
    ErrorCode,
    GenerationStopFrame,
    MessageContinueFrame,
    MessageEditFrame,
    MessageRegenerateFrame,
    MessageSendFrame,
    PingFrame,
    SyncFrame,
    dumps,
)
from .realtime.hub import get_hub
from .realtime.ratelimit import acheck_rate
from .realtime.sockets import CLOSE_NOT_FOUND, CLOSE_NOT_LOGGED_IN, ScopedConsumer
from .replies import Ask, start_reply, stop_reply, sync_state
from .replies.recovery import arecover_if_stale, stale_before
from .replies.watchdog import ensure_watchdog
from .selectors import asocket_access

logger = logging.getLogger(__name__)

_alive_token_ids = db_async(live_token_ids)
_aswitch_branch = db_async(switch_branch)

# Far above the longest message (MESSAGE_MAX_CHARS, even JSON-escaped), far below Daphne's
# 1 MiB frame limit: anything longer is answered `too_long`, the socket stays open.
MAX_FRAME_CHARS = 256 * 1024

CLOSE_TRY_AGAIN_LATER = 1013  # its client left too much unread: it reconnects and syncs
ERROR_CODES = frozenset(get_args(ErrorCode))


def _describe(exc: ValueError) -> str:
    """Say in one line what is wrong with a frame."""
    if isinstance(exc, ValidationError):
        kind = exc.errors()[0]["type"]
        if kind == "union_tag_invalid":
            return "Unknown frame type; use one of: " + ", ".join(CLIENT_FRAME_TYPES) + "."
        if kind == "union_tag_not_found":
            return "A frame is a JSON object with a `type`."
        return first_error(exc, skip=CLIENT_FRAME_TYPES)
    return f"The frame is not valid JSON ({exc})"[:200]


class ConversationConsumer(ScopedConsumer):
    """One client's socket on one conversation."""

    # No channel of its own: the process's hub delivers its frames. (Channels would
    # otherwise open one per socket through Redis, and a socket could not even connect
    # while Redis restarts.)
    channel_layer_alias = "no-channel-layer"

    conversation_id: str | None = None
    temporary_owner: int | None = None  # set on a temporary conversation: it lives by its sockets

    # --- socket handlers ---------------------------------------------------------------
    async def opened(self, user: Any) -> None:
        """Join the conversation's fan-out, accept, then close 4404 or let its frames out."""
        conversation_id = parse_uuid(self.scope["url_route"]["kwargs"]["conversation_id"])
        if conversation_id is None:
            await self.close_with(CLOSE_NOT_FOUND)
            return
        hub = get_hub()
        # Fed here before the client sees it open (held until checked), from elsewhere once joined.
        self.conversation_id = str(conversation_id)
        hub.enter(self.conversation_id, self)
        await self.accept()
        await hub.join(self.conversation_id, self)
        try:
            access = await asocket_access(
                user=user, conversation_id=conversation_id, stale_before=stale_before()
            )
        except NotFound:
            self.conversation_id = None
            await hub.leave(str(conversation_id), self)
            await self.close_with(CLOSE_NOT_FOUND)  # what it held was never its to see
            return
        self.user = user
        await self.release()
        if access.temporary:
            self.temporary_owner = access.owner_id
            await temporary.asocket_opened(self.conversation_id)
        ensure_watchdog(hub)
        if access.run_may_be_stale:  # opening a conversation shows a dead reply ended
            await arecover_if_stale(self.conversation_id)

    async def disconnect(self, code: int) -> None:
        """Leave the fan-out; a running reply goes on without this socket (a temporary
        conversation's last socket starts its grace period)."""
        self.is_closed = True
        if self.conversation_id is not None:
            await get_hub().leave(self.conversation_id, self)
        if self.temporary_owner is not None:
            await temporary.asocket_closed(self.conversation_id, owner_id=self.temporary_owner)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Parse one client frame and run its command; bad input gets an `error` frame."""
        if self.conversation_id is None or self.is_closed:
            return
        if text_data is None:
            await self.send_error("invalid", _("Binary frames are not supported; send JSON text."))
            return
        if len(text_data) > MAX_FRAME_CHARS:
            await self.send_error(
                "too_long",
                _("A frame is at most %(n)s characters.") % {"n": MAX_FRAME_CHARS},
            )
            return
        try:
            frame = CLIENT_FRAME.validate_python(schemas.loads(text_data))
        except ValueError as exc:  # not JSON, or not a frame we know (ValidationError too)
            await self.send_error("invalid", _describe(exc))
            return
        try:
            await self.commands[frame.type](self, frame)
        except RateLimited as exc:
            await self.send_frame(
                events.error(exc.code, exc.message, retry_after=exc.retry_after)  # type: ignore
            )
        except SensitiveInfo as exc:
            await self.send_frame(
                events.error(
                    "sensitive", exc.message, findings=exc.findings, can_confirm=exc.can_confirm
                )
            )
        except ServiceError as exc:
            code = exc.code if exc.code in ERROR_CODES else "invalid"
            await self.send_error(code, exc.message)  # type: ignore[arg-type]

    # --- commands ------------------------------------------------------------------------
    async def send_message(self, frame: MessageSendFrame) -> None:
        """`message.send`: store the message and start the reply."""
        if not await self.still_authorized():
            return
        await self._start(Ask(message=frame))

    async def regenerate(self, frame: MessageRegenerateFrame) -> None:
        """`message.regenerate`: answer that message's question again (a new sibling)."""
        if await self.still_authorized():
            await self._start(Ask.regenerate(frame.message_id, model=frame.model))

    async def edit(self, frame: MessageEditFrame) -> None:
        """`message.edit`: a new version of one of the user's messages, and its reply."""
        if await self.still_authorized():
            await self._start(Ask("edit", frame, frame.message_id))

    async def continue_reply(self, frame: MessageContinueFrame) -> None:
        """`message.continue`: go on from a cut-off reply (a new sibling, whole text)."""
        if await self.still_authorized():
            await self._start(Ask.continue_from(frame.message_id))

    async def switch(self, frame: BranchSwitchFrame) -> None:
        """`branch.switch`: every socket gets `conversation.updated` with the new leaf."""
        await _aswitch_branch(
            user=self.user, message_id=frame.message_id, conversation_id=self.conversation_id
        )

    async def _start(self, ask: Ask) -> None:
        await start_reply(
            user=self.user, ask=ask, conversation_id=self.conversation_id, on_error=self.send_frame
        )

    async def stop_generation(self, frame: GenerationStopFrame) -> None:
        """`generation.stop`: stop the running reply, wherever it runs."""
        await stop_reply(user=self.user, conversation_id=self.conversation_id)

    async def sync(self, frame: SyncFrame) -> None:
        """`sync`: answer with the messages after `after` and the reply in progress,
        in order with the conversation's live frames (so the two meet exactly)."""
        await acheck_rate(user_id=self.user.pk, rate=settings.CHAT_SYNC_RATE_LIMIT, what="syncs")
        state = await sync_state(
            user=self.user, conversation_id=self.conversation_id, after=frame.after
        )
        events.publish(state, conversation_id=self.conversation_id, to=self)

    async def ping(self, frame: PingFrame) -> None:
        """`ping`: answer `pong`."""
        await self.send_frame(events.pong())

    commands: dict[str, Callable[[Any, Any], Awaitable[None]]] = {
        "message.send": send_message,
        "message.regenerate": regenerate,
        "message.edit": edit,
        "message.continue": continue_reply,
        "branch.switch": switch,
        "generation.stop": stop_generation,
        "sync": sync,
        "ping": ping,
    }

    async def still_authorized(self) -> bool:
        """Say whether the socket's API token still holds; close it (4401) if not."""
        if self.token_id is None or self.token_id in await _alive_token_ids({self.token_id}):
            return True
        await self.close_with(CLOSE_NOT_LOGGED_IN)
        return False

    # --- sending -------------------------------------------------------------------------
    async def send_delivered(self, text: str, frame_type: str) -> None:
        """Send a frame the hub fanned out; a deleted conversation closes the socket, and
        so does a client that left more than CHAT_SOCKET_BACKLOG_BYTES unread (1013)."""
        if self.is_closed:
            return
        if (unread_bytes(self.base_send) or 0) > settings.CHAT_SOCKET_BACKLOG_BYTES:
            logger.warning("a socket of %s left too much unread; closing it", self.conversation_id)
            await self.close_with(CLOSE_TRY_AGAIN_LATER)
            return
        await self.send(text_data=text)
        if frame_type == "conversation.deleted":
            await self.close_with(CLOSE_NOT_FOUND)

    async def send_frame(self, frame: Any) -> None:
        """Send one frame to this socket only."""
        if not self.is_closed:
            await self.send(text_data=dumps(frame))

    async def send_error(self, code: ErrorCode, detail: str) -> None:
        """Send an `error` frame to this socket only."""
        await self.send_frame(events.error(code, detail))
