"""Whether other processes listen to a conversation: its group channel's subscriber count.

Token frames are most of what a reply publishes. When no other process has a socket on
the conversation (one process, or every tab on this one), publishing them is pure cost,
and this process would receive each one back (pub/sub has no "except me"). The count
(Redis `PUBSUB NUMSUB` of the group's channel: one subscription per process) is read in
the background at most every REFRESH_SECONDS; while it is unknown, frames are published.
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
        self._reading: set[str] = set()

    def others_listen(self, key: str) -> bool:
        """Say whether another process may have sockets on conversation `key` (True
        until the count is known); refresh the count in the background when stale."""
        known = self._counts.get(key)
        now = self.hub.loop.time()
        if (known is None or now - known[0] > REFRESH_SECONDS) and key not in self._reading:
            self._reading.add(key)
            self.hub.start_task(self._read(key), name=f"audience-{key}")
        if known is None:
            return True
        return known[1] > (1 if self.hub.is_subscribed(key) else 0)

    def forget(self, key: str) -> None:
        """Drop what is known of a conversation this process no longer follows."""
        self._counts.pop(key, None)

    async def _read(self, key: str) -> None:
        try:
            client = get_redis()
            if client is None:
                return
            channel = self.hub.layer._get_group_channel_name(conversation_group(key))
            [(_name, count)] = await client.pubsub_numsub(channel)
            self._counts[key] = (self.hub.loop.time(), int(count))
        except Exception:
            self._counts.pop(key, None)  # unknown again: publish
        finally:
            self._reading.discard(key)
