"""Whether other processes listen to a conversation: its group channel's subscriber count.

Token frames are most of what a reply publishes. When no other process has a socket on
the conversation (one process, or every tab on this one), publishing them is pure cost,
and this process would receive each one back (pub/sub has no "except me"). The count
(Redis `PUBSUB NUMSUB` of the group's channel: one subscription per process) is read in
the background at most every REFRESH_SECONDS; while it is unknown, frames are published.
One reader asks for every conversation due at once (one NUMSUB of many channels), at most
every BATCH_SECONDS: a command per conversation every half second was 5% of a process's
CPU with 200 replies streaming.
A process that subscribes meanwhile misses tokens for at most that long: the chunk after
the hole makes it fill the gap from the reply's stored progress (realtime/continuity.py),
as after any lost frame. Frames other than tokens are always published.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Protocol

from core.groups import conversation_group

from .redis import get_redis

REFRESH_SECONDS = 0.5
BATCH_SECONDS = 0.1  # the reader gathers the conversations due this long before asking


class Publisher(Protocol):
    """What the audience needs of the hub."""

    loop: asyncio.AbstractEventLoop
    layer: Any

    def start_task(self, coro: Coroutine[Any, Any, Any], *, name: str) -> Any: ...

    def is_subscribed(self, key: str) -> bool: ...


class Audience:
    """Subscriber counts of the conversations this process publishes to."""

    def __init__(self, hub: Publisher) -> None:
        self.hub = hub
        self._counts: dict[str, tuple[float, int]] = {}  # key → (read at, subscribers)
        self._due: set[str] = set()  # asked about, count stale or unknown: read next
        self._reader: Any = None

    def others_listen(self, key: str) -> bool:
        """Say whether another process may have sockets on conversation `key` (True
        until the count is known); refresh the count in the background when stale."""
        known = self._counts.get(key)
        if known is None or self.hub.loop.time() - known[0] > REFRESH_SECONDS:
            self._due.add(key)
            if self._reader is None or self._reader.done():
                self._reader = self.hub.start_task(self._read_due(), name="audience")
        if known is None:
            return True
        return known[1] > (1 if self.hub.is_subscribed(key) else 0)

    def forget(self, key: str) -> None:
        """Drop what is known of a conversation this process no longer follows."""
        self._counts.pop(key, None)
        self._due.discard(key)

    async def _read_due(self) -> None:
        while self._due:
            await asyncio.sleep(BATCH_SECONDS)
            keys, self._due = [*self._due], set()
            await self._read(*keys)

    async def _read(self, *keys: str) -> None:
        try:
            client = get_redis()
            if client is None:
                return
            channels = [self.hub.layer._get_group_channel_name(conversation_group(k)) for k in keys]
            counts = await client.pubsub_numsub(*channels)
            now = self.hub.loop.time()
            for key, (_name, count) in zip(keys, counts, strict=True):
                self._counts[key] = (now, int(count))
        except Exception:
            for key in keys:
                self._counts.pop(key, None)  # unknown again: publish
