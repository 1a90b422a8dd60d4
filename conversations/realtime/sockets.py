"""What every signed-in websocket shares: its user's RLS scope and language on every event,
the open prologue (4401 for a visitor), frames held until the socket is checked, and an
outage closing it 1013. `ConversationConsumer` (conversations/consumers.py) and
`UserConsumer` (conversations/list_consumer.py) build on it."""

from __future__ import annotations

from typing import Any

from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from django.utils.translation import override

from core import rls
from core.unavailable import close_socket_on_outage

from .auth import scope_language

CLOSE_NOT_LOGGED_IN = 4401
CLOSE_NOT_FOUND = 4404


class ScopedConsumer(AsyncWebsocketConsumer):
    """A signed-in user's socket: every event runs in the user's RLS scope (core/rls.py),
    and `connect` is the same prologue for every kind (4401, or `opened`).

    The socket joins its process's fan-out before the client sees it open, so a frame
    posted here afterwards reaches it (a rename right after opening once did not). Its
    database check and channel-layer subscription come after the accept: a loaded process
    keeps no handshake behind other queries or Redis (Daphne drops one after 5 s: 330 of
    800 sockets at 400 replies streaming, bench/capacity.py). Frames handed over until
    `release()` are held, dropped if the socket is refused. Another process's frame posted
    between the accept and the subscription is not heard: clients `sync` after opening
    (docs/websocket-protocol.md). A close before the accept accepts first (not a bare 403).
    """

    token_id: int | None = None
    is_closed = False
    accepted = False
    _held: list[tuple[str, str]] | None = None  # frames handed over before `release()`
    language: str | None = None  # the person's (scope_language), found at the first message

    async def connect(self) -> None:
        """Close 4401 for a visitor or go on with `opened(user)`."""
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close_with(CLOSE_NOT_LOGGED_IN)
            return
        # A socket opened with an API token closes (4401) once that token is revoked.
        self.token_id = self.scope.get("token_id")
        self._held = []
        await self.opened(user)

    async def opened(self, user: Any) -> None:
        """Join the hub for its signed-in `user`, accept, check, then `release()` (or close
        it with a reason)."""
        raise NotImplementedError

    async def release(self) -> None:
        """Send what the hub handed the socket while it was being checked, in order; from
        now on frames go straight out."""
        held = self._held
        while held and not self.is_closed:  # frames handed over meanwhile queue behind
            text, frame_type = held.pop(0)
            await self.send_delivered(text, frame_type)
        self._held = None

    async def accept(self, subprotocol: Any = None, headers: Any = None) -> None:
        self.accepted = True
        await super().accept(subprotocol, headers)

    async def close(self, code: Any = None, reason: Any = None) -> None:
        if not self.accepted:  # a close before accept reaches the client as a bare 403
            await self.accept()
        await super().close(code, reason)

    async def close_with(self, code: int) -> None:
        """Close the socket with an application close code (nothing held is sent)."""
        self.is_closed = True
        self._held = None
        await self.close(code=code)

    async def deliver(self, text: str, frame_type: str) -> None:
        """Send a frame the hub fanned out (kept until `open()` if it comes before)."""
        if self.is_closed:
            return
        if self._held is not None:
            self._held.append((text, frame_type))
            return
        await self.send_delivered(text, frame_type)

    async def send_delivered(self, text: str, frame_type: str) -> None:
        """Send a frame the hub fanned out, the socket being open."""
        raise NotImplementedError

    # Channels (4.2+) runs Django's `close_old_connections` before every message and after the
    # disconnect, each through asgiref's ONE thread-sensitive thread: five hops a chat, all
    # sockets queued behind one thread (2.5% of the CPU in a burst of 200 replies). Our
    # database calls never run there; `database_sync_to_async` closes theirs (db_async.py).
    async def dispatch(self, message: Any) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        # What a person reads (errors, a reply's failure) in their language; a reply
        # started here keeps it (its task copies this context).
        if self.language is None:
            self.language = scope_language(self.scope)
        with rls.using(rls.scope_for_user(self.scope.get("user"))), override(self.language):
            try:
                await handler(message)
            except Exception as exc:
                # PostgreSQL or Redis out of reach: close 1013 (try again later), not 1011.
                if not await close_socket_on_outage(self, exc, message):
                    raise

    async def websocket_disconnect(self, message: Any) -> None:
        """Leave, and end the consumer (no channel-layer groups; no thread hop: above)."""
        await self.disconnect(message["code"])
        raise StopConsumer


class NoSuchSocket(AsyncWebsocketConsumer):
    """A websocket path that names nothing: accept, then close 4404, like a missing one."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=CLOSE_NOT_FOUND)
