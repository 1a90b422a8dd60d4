"""This process's list-page sockets (`/ws/user/`), per user, and their frames.

The hub (realtime/hub.py) mixes this in. A user's list sockets here share one channel-layer
subscription to the user's group, held while any is open (not one per socket: 50 tabs would
cost 50 subscriptions and 50 Redis deliveries per frame). A frame posted for a user goes,
in posting order, straight to that user's list sockets here and is published once for the
other processes (realtime/interprocess.py), which forward it to their own list sockets only.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from core import rls
from core.groups import user_group

from .frames import dumps

logger = logging.getLogger(__name__)


class Lists:
    """The list-page half of the Hub: it uses the hub's loop, `_publish`, `_subscribe_group`,
    `_unsubscribe_if_idle` and Delivery's `_to_socket`."""

    loop: asyncio.AbstractEventLoop
    shared: bool
    _publish: Callable[..., None]
    _subscribe_group: Callable[[str], Any]
    _unsubscribe_if_idle: Callable[[str], Any]
    _to_socket: Callable[[Any, str, str], Any]

    def _init_lists(self) -> None:
        self.lists: dict[str, set[Any]] = {}  # user group → this process's list sockets
        self._list_queues: dict[str, deque[dict[str, Any]]] = {}
        self._list_pumps: dict[str, asyncio.Task[None]] = {}

    def enter_list(self, user_id: Any, sock: Any) -> None:
        """Deliver the user's list frames posted in this process to `sock` from now on
        (`join_list` hears the other processes' too)."""
        self.lists.setdefault(user_group(user_id), set()).add(sock)

    async def join_list(self, user_id: Any, sock: Any) -> None:
        """Deliver the user's list frames to `sock` from now on.

        Raises what the channel layer raised when the user's group cannot be subscribed to
        (Redis out of reach): the socket closes 1013 (core/unavailable.py) rather than
        missing what other processes send.
        """
        group = user_group(user_id)
        self.enter_list(user_id, sock)
        try:
            await self._subscribe_group(group)
        except BaseException:
            await self.leave_list(user_id, sock)
            raise

    async def leave_list(self, user_id: Any, sock: Any) -> None:
        """Stop delivering to `sock`; the last socket of its user here unsubscribes."""
        group = user_group(user_id)
        members = self.lists.get(group)
        if members is not None:
            members.discard(sock)
            if not members:
                del self.lists[group]
        await self._unsubscribe_if_idle(group)

    def post_to_lists(self, user_id: Any, frame: Any) -> None:
        """Queue a frame for the user's list sockets here and, once, for other processes."""
        group = user_group(user_id)
        self._post_list(group, [frame])
        if self.shared:
            self._publish(group, frame)

    def _post_list(self, group: str, frames: list[dict[str, Any]]) -> None:
        """Queue frames for this process's list sockets of `group` (in posting order)."""
        if group not in self.lists:
            return
        self._list_queues.setdefault(group, deque()).extend(frames)
        if group not in self._list_pumps:
            self._list_pumps[group] = self.loop.create_task(
                self._pump_list(group), context=rls.unscoped_context()
            )

    async def _pump_list(self, group: str) -> None:
        queue = self._list_queues[group]
        try:
            while queue:
                frame = queue.popleft()
                text = dumps(frame)
                for sock in list(self.lists.get(group, ())):
                    await self._to_socket(sock, text, frame["type"])
        finally:
            del self._list_pumps[group]
            if not queue:
                self._list_queues.pop(group, None)
