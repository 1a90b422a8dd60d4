"""The process-wide hub: this process's sockets, its running replies, and the fan-out.

A frame posted for a conversation is sent, in posting order, straight to the sockets of
that conversation connected to this process, and published once to the channel layer
tagged with this process's id; every other process's hub forwards it to its own
sockets, never back. Stop requests travel the same way to the process that owns a run.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from channels.layers import InMemoryChannelLayer, get_channel_layer

from ..events import conversation_group
from . import progress
from .frames import dumps

logger = logging.getLogger(__name__)

PROCESS_ID = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
GROUP_PREFIX = conversation_group("")


class LocalSocket(Protocol):
    async def deliver(self, text: str, frame_type: str) -> None:
        """Send one serialized frame to the client."""


@dataclass
class RunHandle:
    """A reply running in this process."""

    conversation_id: str
    run_id: uuid.UUID
    done: asyncio.Future[Any]
    on_error: Callable[[Any], Awaitable[None]] | None = None
    task: asyncio.Task[Any] | None = None
    started: bool = False  # a task cancelled before its first step would skip its cleanup
    finishing: bool = False  # storing the reply: too late to stop, and must not be cut
    stop_requested: bool = field(default=False)

    def stop(self) -> None:
        """Cancel the run; its own cleanup stores the partial reply."""
        if self.finishing:
            return
        self.stop_requested = True
        if self.started and self.task is not None:
            self.task.cancel()


@dataclass
class _Item:
    frame: dict[str, Any]
    append: tuple[str, str] | None  # (run id, text) to add to the reply in progress first
    local_only: bool


class Hub:
    """Sockets and runs of one event loop (one per Daphne process in production)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.layer = get_channel_layer()
        # The in-memory layer reaches no other process: local delivery is all there is.
        self.shared = self.layer is not None and not isinstance(self.layer, InMemoryChannelLayer)
        self.sockets: dict[str, set[LocalSocket]] = {}
        self.runs: dict[str, RunHandle] = {}
        self._queues: dict[str, deque[_Item]] = {}
        self._pumps: dict[str, asyncio.Task[None]] = {}
        self._subscribed: set[str] = set()
        # Ids of messages announced lately: a reply stored by the agent with its own
        # announcement must not reach clients twice.
        self._announced: dict[str, deque[str]] = {}
        self._channel: str | None = None
        self._receiver: asyncio.Task[None] | None = None
        self._outbox: dict[str, list[dict[str, Any]]] = {}  # frames for other processes
        self._publisher: asyncio.Task[None] | None = None

    # --- sockets and runs ----------------------------------------------------------
    async def join(self, conversation_id: Any, sock: LocalSocket) -> None:
        """Deliver the conversation's frames to `sock` from now on."""
        key = str(conversation_id)
        self.sockets.setdefault(key, set()).add(sock)
        await self._subscribe(key)

    async def leave(self, conversation_id: Any, sock: LocalSocket) -> None:
        """Stop delivering to `sock`."""
        key = str(conversation_id)
        members = self.sockets.get(key)
        if members is not None:
            members.discard(sock)
            if not members:
                del self.sockets[key]
        await self._unsubscribe_if_idle(key)

    async def add_run(self, handle: RunHandle) -> None:
        """Register a run so stop requests from any process find it."""
        self.runs[handle.conversation_id] = handle
        await self._subscribe(handle.conversation_id)

    async def remove_run(self, handle: RunHandle) -> None:
        """Forget a finished run."""
        if self.runs.get(handle.conversation_id) is handle:
            del self.runs[handle.conversation_id]
        await self._unsubscribe_if_idle(handle.conversation_id)

    async def request_stop(self, conversation_id: Any) -> None:
        """Stop the conversation's run here, or ask the process that owns it."""
        key = str(conversation_id)
        handle = self.runs.get(key)
        if handle is not None:
            handle.stop()
        elif self.shared:
            event = {"type": "chat.stop", "conversation_id": key, "origin": PROCESS_ID}
            await self.layer.group_send(conversation_group(key), event)

    # --- fan-out ---------------------------------------------------------------------
    def post(
        self,
        conversation_id: Any,
        frame: dict[str, Any],
        *,
        append: tuple[str, str] | None = None,
        local_only: bool = False,
    ) -> None:
        """Queue a frame for the conversation's sockets here and, once, for other processes."""
        key = str(conversation_id)
        if frame.get("type") == "message.created" and not local_only:
            announced = self._announced.setdefault(key, deque(maxlen=16))
            if frame["message"]["id"] in announced:
                return
            announced.append(frame["message"]["id"])
        self._queues.setdefault(key, deque()).append(_Item(frame, append, local_only))
        if key not in self._pumps:
            self._pumps[key] = self.loop.create_task(self._pump(key))

    def post_threadsafe(self, conversation_id: Any, frame: dict[str, Any]) -> None:
        """Post from another thread (a sync service's on_commit)."""
        self.loop.call_soon_threadsafe(self.post, conversation_id, frame)

    async def _pump(self, key: str) -> None:
        queue = self._queues[key]
        try:
            while queue:
                await self._send(key, queue.popleft())
        finally:
            del self._pumps[key]
            if not queue:
                self._queues.pop(key, None)

    async def _send(self, key: str, item: _Item) -> None:
        if item.append is not None:
            run_id, text = item.append
            try:
                await progress.aappend(conversation_id=key, run_id=run_id, text=text)
            except Exception:
                logger.exception("could not record reply progress of %s", key)
        text = dumps(item.frame)
        for sock in list(self.sockets.get(key, ())):
            try:
                await sock.deliver(text, item.frame["type"])
            except Exception:
                logger.exception("could not deliver to a socket of %s", key)
        if self.shared and not item.local_only:
            self._publish(key, item.frame)

    def _publish(self, key: str, frame: dict[str, Any]) -> None:
        """Queue a frame for the other processes; local sockets never wait for it."""
        self._outbox.setdefault(key, []).append(frame)
        if self._publisher is None or self._publisher.done():
            self._publisher = self.loop.create_task(self._publish_outbox())

    async def _publish_outbox(self) -> None:
        # The layer sends one message at a time under a process-wide lock (one Redis
        # round trip each), so a conversation's waiting frames travel as one message,
        # in order: one sender, conversations taken in turn.
        while self._outbox:
            key = next(iter(self._outbox))
            frames = self._outbox.pop(key)
            event = {"type": "chat.frames", "conversation_id": key, "frames": frames}
            event["origin"] = PROCESS_ID
            try:
                await self.layer.group_send(conversation_group(key), event)
            except Exception:
                logger.exception("could not publish %d frame(s) of %s", len(frames), key)

    async def flushed(self, conversation_id: Any) -> None:
        """Wait until every frame posted so far for the conversation has been sent."""
        pump = self._pumps.get(str(conversation_id))
        while pump is not None:
            await asyncio.shield(pump)
            pump = self._pumps.get(str(conversation_id))

    # --- the channel layer -------------------------------------------------------------
    async def _subscribe(self, key: str) -> None:
        if not self.shared or key in self._subscribed:
            return
        self._subscribed.add(key)
        if self._channel is None:
            self._channel = await self.layer.new_channel()
            self._receiver = self.loop.create_task(self._receive(self._channel))
        await self.layer.group_add(conversation_group(key), self._channel)

    async def _unsubscribe_if_idle(self, key: str) -> None:
        if key in self.sockets or key in self.runs:
            return
        self._announced.pop(key, None)
        if key not in self._subscribed:
            return
        self._subscribed.discard(key)
        await self.layer.group_discard(conversation_group(key), self._channel)

    async def _receive(self, channel: str) -> None:
        while True:
            event = await self.layer.receive(channel)
            try:
                self._dispatch(event)
            except Exception:
                logger.exception("bad channel-layer event %r", event)

    def _dispatch(self, event: dict[str, Any]) -> None:
        if event.get("origin") == PROCESS_ID:
            return
        key = event.get("conversation_id") or _conversation_of(event.get("group", ""))
        if not key:
            return
        if event.get("type") == "chat.frames":
            for frame in event["frames"]:
                self.post(key, frame, local_only=True)
        elif event.get("type") == "chat.frame":
            self.post(key, event["frame"], local_only=True)
        elif event.get("type") == "chat.stop" and key in self.runs:
            self.runs[key].stop()

    async def aclose(self) -> None:
        """Stop runs and the layer receiver (tests, shutdown)."""
        for handle in list(self.runs.values()):
            handle.stop()
        tasks = [h.task for h in self.runs.values() if h.task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._publisher is not None:
            await asyncio.gather(self._publisher, return_exceptions=True)
        if self._receiver is not None:
            self._receiver.cancel()
            await asyncio.gather(self._receiver, return_exceptions=True)


def _conversation_of(group: str) -> str | None:
    return group[len(GROUP_PREFIX) :] if group.startswith(GROUP_PREFIX) else None


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = weakref.WeakKeyDictionary()
_current: Hub | None = None


def get_hub() -> Hub:
    """Return the running loop's hub, creating it on first use."""
    global _current
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        hub = _hubs[loop] = Hub(loop)
    _current = hub
    return hub


def current_hub() -> Hub | None:
    """Return the hub of the server loop, from any thread, if one is running."""
    hub = _current
    if hub is None or hub.loop.is_closed() or not hub.loop.is_running():
        return None
    return hub


async def aclose_hub() -> None:
    """Close the running loop's hub (tests)."""
    global _current
    hub = _hubs.pop(asyncio.get_running_loop(), None)
    if hub is not None:
        await hub.aclose()
        if _current is hub:
            _current = None
