"""The socket of a user's conversation list (`/ws/user/`, not in SPEC): every tab of the user
hears `conversation.updated` and `conversation.deleted` (SPEC "WebSocket")."""

from __future__ import annotations

from typing import Any

from core import schemas

from . import events
from .realtime.frames import dumps
from .realtime.hub import get_hub
from .realtime.sockets import ScopedConsumer
from .replies.watchdog import ensure_watchdog


class UserConsumer(ScopedConsumer):
    """One tab's feed of its user's conversation list: `conversation.updated`/`deleted`."""

    # No channel of its own: the process's hub delivers its frames, one channel-layer
    # subscription per user and process however many tabs are open (realtime/lists.py).
    channel_layer_alias = "no-channel-layer"

    user_id: int | None = None

    # --- socket handlers ---------------------------------------------------------------
    async def opened(self, user: Any) -> None:
        """Join the user's list sockets in this process, accept, then subscribe (1013 if
        Redis is out of reach): the handshake waits for nothing, as a conversation's."""
        hub = get_hub()
        hub.enter_list(user.pk, self)  # frames posted here meanwhile are held, then sent
        await self.accept()
        await hub.join_list(user.pk, self)  # on failure it leaves the list again
        self.user_id = user.pk
        if self.token_id is not None:  # closed (4401) once the token is revoked (watchdog)
            hub.listeners.add(self)
        ensure_watchdog(hub)  # it also subscribes again after a Redis outage
        await self.release()

    async def disconnect(self, code: int) -> None:
        """Leave the user's list sockets."""
        self.is_closed = True
        hub = get_hub()
        hub.listeners.discard(self)
        if self.user_id is not None:
            await hub.leave_list(self.user_id, self)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Answer `ping`; this socket only listens otherwise."""
        try:
            frame = schemas.loads(text_data or "")
        except ValueError:
            frame = None
        if isinstance(frame, dict) and frame.get("type") == "ping":
            await self.send(text_data=dumps(events.pong()))
        else:
            await self.send(text_data=dumps(events.error("invalid", "Only `ping` is accepted.")))

    # --- sending -------------------------------------------------------------------------
    async def send_delivered(self, text: str, frame_type: str) -> None:
        """Send a list frame the hub fanned out."""
        if not self.is_closed:
            await self.send(text_data=text)
