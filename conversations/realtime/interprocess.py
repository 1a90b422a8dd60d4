"""The hub's side of the channel layer: frames out to the other processes, theirs in.

The hub (realtime/hub.py) mixes this in. Frames for other processes wait in an outbox
and leave one group at a time (retried while Redis restarts, PUBLISH_RETRY_SECONDS at
most), tagged with PROCESS_ID so no process hears its own frames back; a conversation
is subscribed to while it has sockets or a run here, a user's group while the user has list
sockets here (realtime/lists.py), and what arrives is posted to this process's sockets or,
for a stop request, handed to the run.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Callable
from typing import Any

from core import rls
from core.groups import conversation_group, conversation_of, is_user_group
from core.outages import outage_of

logger = logging.getLogger(__name__)

PROCESS_ID = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
# While the channel layer is unreachable (Redis restarting), frames for other processes
# wait and are retried in order, for at most this long; then they are dropped (logged).
PUBLISH_RETRY_SECONDS = 30.0
# A send to the layer that takes longer stops pacing this process's replies: their chunks
# go on to local sockets without waiting for it (and for any send while it lasts).
STALLED_SEND_SECONDS = 0.25


class Interprocess:
    """The interprocess half of the Hub: it uses the hub's layer, sockets, runs, `post`,
    Lists' `lists` and `_post_list`, and Continuity's `_mark_missed` and `_echo_returned`."""

    loop: asyncio.AbstractEventLoop
    layer: Any
    shared: bool
    closing: bool
    sockets: dict[str, Any]
    lists: dict[str, Any]
    runs: dict[str, Any]
    cancel_runs: Callable[[Any, str], bool]
    audience: Any
    post: Callable[..., None]
    _post_list: Callable[[str, list[dict[str, Any]]], None]
    _mark_missed: Callable[[list[str]], None]
    _echo_returned: Callable[[int], None]

    def _init_interprocess(self) -> None:
        self._subscribed: set[str] = set()
        self._channel: str | None = None
        self._receiver: asyncio.Task[None] | None = None
        # Subscriptions made at the same moment (a burst of joins, a resubscription) share
        # one channel and one receiver: each made its own, and the extra receivers were
        # never cancelled (pending at shutdown after every Redis restart).
        self._opening_channel = asyncio.Lock()
        self._outbox: dict[str, list[dict[str, Any]]] = {}  # group → frames for the layer
        self._outbox_sent: dict[str, list[Callable[[], None]]] = {}  # told once they are out
        self._publisher: asyncio.Task[None] | None = None
        self._publish_stalled = False  # the layer is failing or slow: senders don't wait

    # --- publishing ------------------------------------------------------------------
    def _publish(self, group: str, frame: Any, on_sent: Callable[[], None] | None = None) -> None:
        """Queue a frame for the channel layer; local sockets never wait for it."""
        self._outbox.setdefault(group, []).append(frame)
        if on_sent is not None and self._publish_stalled:
            self.loop.call_soon(on_sent)
        elif on_sent is not None:
            self._outbox_sent.setdefault(group, []).append(on_sent)
        if self._publisher is None or self._publisher.done():
            self._publisher = self.loop.create_task(
                self._publish_outbox(), context=rls.unscoped_context()
            )

    async def _publish_outbox(self) -> None:
        # The layer sends one message at a time under a process-wide lock (one Redis
        # round trip each), so a group's waiting frames travel as one message, in order:
        # one sender, groups taken in turn. A failed send is retried (Redis restarting).
        failing_since: float | None = None
        while self._outbox:
            group = next(iter(self._outbox))
            frames = self._outbox.pop(group)
            sent = self._outbox_sent.pop(group, [])
            event = {"type": "chat.frames", "frames": frames, "group": group, "origin": PROCESS_ID}
            sending = self.loop.create_task(self.layer.group_send(group, event))
            try:
                await asyncio.wait([sending], timeout=STALLED_SEND_SECONDS)
                if not sending.done():  # Redis slow or restarting (redis-py retries)
                    self._publish_stalled = True
                    _tell(sent)
                    sent = []
                    await asyncio.wait([sending])
                sending.result()
                failing_since = None
                self._publish_stalled = False
            except asyncio.CancelledError:
                sending.cancel()
                raise
            except Exception as exc:
                self._publish_stalled = True
                _tell(sent)  # a Redis outage must not hold back this process's own sockets
                sent = []
                if outage_of(exc) is None and not isinstance(exc, OSError):
                    # Not Redis away but frames the layer cannot carry: retrying won't help.
                    logger.error("dropped %d frame(s) of %s: %r", len(frames), group, exc)
                    continue
                now = self.loop.time()
                failing_since = failing_since or now
                if now - failing_since > PUBLISH_RETRY_SECONDS or self.closing:
                    logger.error("dropped %d frame(s) of %s: %s", len(frames), group, exc)
                    continue
                logger.warning("channel layer unreachable (%s); retrying %s", exc, group)
                # Back at the front, before any frame of the group queued meanwhile.
                later = self._outbox.pop(group, [])
                self._outbox = {group: frames + later, **self._outbox}
                await asyncio.sleep(0.5)
            finally:
                _tell(sent)

    # --- subscribing -----------------------------------------------------------------
    # `_subscribed` holds conversation ids and user groups (realtime/lists.py) alike.
    async def _subscribe(self, key: str) -> None:
        try:
            await self._subscribe_group(key)
        except Exception as exc:
            # Redis is down: local sockets still work; the watchdog subscribes again and
            # then sends these sockets what was published meanwhile.
            self._mark_missed([key])
            logger.warning("could not subscribe to %s; will retry (%s)", key, exc)

    async def _subscribe_group(self, key: str) -> None:
        """Hear what other processes publish to `key`; raise if the layer is out of reach."""
        if not self.shared or key in self._subscribed:
            return
        self._subscribed.add(key)
        try:
            await self.layer.group_add(_group_of(key), await self._own_channel())
        except BaseException:
            self._subscribed.discard(key)
            raise

    async def _own_channel(self) -> str:
        """Return this process's layer channel, opening it (and its receiver) once."""
        async with self._opening_channel:
            if self._channel is None:
                channel = await self.layer.new_channel()
                self._receiver = self.loop.create_task(
                    self._receive(channel), context=rls.unscoped_context()
                )
                self._channel = channel
            return self._channel

    async def resubscribe(self) -> None:
        """Subscribe to every conversation with local sockets or runs, and every user with
        list sockets here (after an outage)."""
        for key in {*self.sockets, *self.runs} - self._subscribed:
            await self._subscribe(key)
        for group in set(self.lists) - self._subscribed:
            try:
                await self._subscribe_group(group)
            except Exception as exc:
                logger.warning("could not subscribe to %s; will retry (%s)", group, exc)

    def is_subscribed(self, key: str) -> bool:
        """Say whether this process hears what other processes publish to `key`."""
        return key in self._subscribed

    async def _unsubscribe_if_idle(self, key: str) -> None:
        if key in self.sockets or key in self.runs or key in self.lists:
            return
        if key not in self._subscribed:
            return
        self._subscribed.discard(key)
        self.audience.forget(key)
        try:
            await self.layer.group_discard(_group_of(key), self._channel)
        except Exception as exc:
            logger.warning("could not unsubscribe from %s (%s)", key, exc)

    async def _receive(self, channel: str) -> None:
        while True:
            event = await self.layer.receive(channel)
            try:
                self._dispatch(event)
            except Exception:
                logger.exception("bad channel-layer event %r", event)

    def _dispatch(self, event: dict[str, Any]) -> None:
        if event.get("type") == "chat.echo":
            self._echo_returned(int(event.get("nonce") or 0))
            return
        if event.get("origin") == PROCESS_ID:
            return
        group = event.get("group") or ""
        if is_user_group(group):
            if event.get("type") == "chat.frames":
                self._post_list(group, event["frames"])
            return
        key = conversation_of(group) or event.get("conversation_id")
        if not key:
            return
        if event.get("type") == "chat.frames":
            for frame in event["frames"]:
                self.post(key, frame, local_only=True)
        elif event.get("type") == "chat.stop":
            self.cancel_runs(key, "stop")

    async def _close_interprocess(self, wait_seconds: float) -> None:
        """Publish what is still queued (waiting `wait_seconds` at most), then stop listening."""
        if self._publisher is not None:
            await asyncio.wait([self._publisher], timeout=wait_seconds)
        if self._receiver is not None:
            self._receiver.cancel()
            await asyncio.gather(self._receiver, return_exceptions=True)


def _group_of(key: str) -> str:
    """Name the layer group of a subscription key (a conversation id or a user group)."""
    return key if is_user_group(key) else conversation_group(key)


def _tell(callbacks: list[Callable[[], None]]) -> None:
    for callback in callbacks:
        try:
            callback()
        except Exception:
            logger.exception("a sent-callback failed")
