"""What keeps a process's sockets whole when frames from other processes are lost.

Redis pub/sub keeps nothing: while a process is not subscribed (Redis restarting, a
connection being rebuilt) whatever other processes publish is gone for its sockets.
The hub (realtime/hub.py) mixes this in:
- it notes what each conversation's sockets here were sent (messages, reply text);
- a chunk of another process's reply that arrives after a hole is filled from the
  reply's progress record, or held back — never handed to a client with a gap
  (realtime/delivery.py);
- `check_layer` (called by the watchdog) detects a Redis restart or a broken
  subscription, rebuilds it, and `take_caught_up` then names the conversations whose
  sockets need a `sync.state`, from `delivered_before_loss` on.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from .redis import get_redis

logger = logging.getLogger(__name__)


class Continuity:
    """The continuity half of the Hub: it uses the hub's sockets, subscription and
    `resubscribe`."""

    sockets: dict[str, Any]
    shared: bool
    layer: Any
    _channel: str | None
    _receiver: asyncio.Task[None] | None
    _subscribed: set[str]

    def _init_continuity(self) -> None:
        # See check_layer: echoes are numbered; a conversation marked as having missed
        # frames is caught up once an echo sent after the marking has come back.
        self._echo_sent = 0
        self._echo_seen = 0
        self._redis_run_id: str | None = None
        self._last_seq: dict[str, int] = {}  # conversation → highest message delivered here
        # `_last_seq` as of the last echo that came back: frames up to it surely arrived.
        self._safe_seq: dict[str, int] = {}
        self._echo_snapshots: dict[int, dict[str, int]] = {}
        self._missed: dict[str, int] = {}  # conversation → echo count when it missed frames

    def _echo_returned(self, nonce: int) -> None:
        if nonce > self._echo_seen:
            self._echo_seen = nonce
            self._safe_seq = self._echo_snapshots.get(nonce, self._safe_seq)
            for old in [n for n in self._echo_snapshots if n <= nonce]:
                del self._echo_snapshots[old]

    def _track(self, key: str, frame: dict[str, Any]) -> None:
        """Note the newest message this process's sockets of a conversation were sent."""
        kind = frame["type"]
        if kind == "message.created":
            seq = frame["message"]["sequence_number"]
            self._last_seq[key] = max(seq, self._last_seq.get(key, 0))
        elif kind == "sync.state" and frame["messages"]:
            seq = max(m["sequence_number"] for m in frame["messages"])
            self._last_seq[key] = max(seq, self._last_seq.get(key, 0))

    async def check_layer(self) -> None:
        """Prove the subscription still delivers; rebuild it if not.

        Redis pub/sub keeps nothing: whatever is published while this process is not
        subscribed (Redis restarting, the connection being rebuilt) is gone for its
        sockets. So each call
        - asks Redis for its run id: a new one means Redis restarted, and every
          conversation here may have missed frames;
        - sends this process a numbered echo through the layer: one that has not come
          back by the next call means the subscription is broken: it is rebuilt.
        A conversation that may have missed frames is named by `take_caught_up` once an
        echo sent after that has come back (the subscription provably works again).
        """
        if not self.shared or self._channel is None:
            return
        run_id = await self._read_redis_run_id()
        if run_id is None or (self._redis_run_id is not None and run_id != self._redis_run_id):
            self._mark_missed(list(self.sockets))
        self._redis_run_id = run_id or self._redis_run_id
        if self._echo_sent and self._echo_seen != self._echo_sent:
            logger.warning("channel layer subscription lost; subscribing again")
            self._mark_missed(list(self.sockets))
            await self._reset_subscription()
            return
        self._echo_sent += 1
        self._echo_snapshots[self._echo_sent] = dict(self._last_seq)
        try:
            await self.layer.send(self._channel, {"type": "chat.echo", "nonce": self._echo_sent})
        except Exception as exc:
            logger.warning("channel layer unreachable: %s", exc)

    async def _read_redis_run_id(self) -> str | None:
        client = get_redis()
        if client is None:
            return None
        try:
            return (await client.info("server")).get("run_id")
        except Exception:
            return None

    def _mark_missed(self, keys: list[str]) -> None:
        for key in keys:
            self._missed.setdefault(key, self._echo_sent)

    def take_caught_up(self) -> list[str]:
        """Return (once) the conversations that missed frames and are provably subscribed."""
        ready = [
            key
            for key, marked in self._missed.items()
            if self._echo_seen > marked and key in self._subscribed and key in self.sockets
        ]
        for key in ready:
            del self._missed[key]
        for key in [k for k in self._missed if k not in self.sockets]:
            del self._missed[key]
        return ready

    async def _reset_subscription(self) -> None:
        if self._receiver is not None:
            self._receiver.cancel()
            await asyncio.gather(self._receiver, return_exceptions=True)
        try:
            await self.layer.flush()  # drops the pub/sub connections and their state
        except Exception as exc:
            logger.warning("could not reset the channel layer: %s", exc)
        self._channel, self._receiver = None, None
        self._echo_seen = self._echo_sent  # that echo is lost with the old subscription
        self._subscribed.clear()
        await self.resubscribe()

    def delivered_before_loss(self, conversation_id: Any) -> int:
        """Return the sequence number up to which this process's sockets surely got every
        message of a conversation (as of the last echo that came back before a loss)."""
        return self._safe_seq.get(str(conversation_id), 0)
