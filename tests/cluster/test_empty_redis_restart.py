"""Redis restarts empty while a reply streams: nothing of the reply is lost or garbled.

A socket on each process (a, b, c, straight to each) watches one conversation; the one on
`a` asks for a long reply, so it runs on `a` and reaches `b` and `c` through Redis. Mid-
reply the cluster's Redis is killed and, a moment later, started again on the same port
with nothing in it (no persistence): the reply's progress record and every pub/sub
subscription are gone. Meanwhile an HTTP client polls through HAProxy. Afterwards the
reply must be stored whole (the fake model's exact text), every socket must hold exactly
that text (its chunks and any `sync.state` meeting with no gap and no repeat), no socket
may close, no request may fail with a 500, and a message sent on each process must reach
every socket.
"""

from __future__ import annotations

import asyncio
import json
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import websockets
from redis import Redis

from accounts.tokens import create_api_token
from conversations import services
from conversations.models import Message
from tests.cluster.conftest import LONG_REPLY

pytestmark = pytest.mark.django_db(transaction=True)

DOWN_SECONDS = 1.5  # Redis away between the kill and the new server
WAIT = 30.0  # bound on every wait for frames
MARKER = "test:before-restart"


@dataclass
class Watcher:
    """A client holding messages by id and each run's text, noting every fault it sees."""

    node: str
    ws: Any = None
    messages: dict[str, dict] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)
    faults: list[str] = field(default_factory=list)
    syncs: list[float] = field(default_factory=list)  # when each sync.state came (unasked)
    closed: int | None = None
    last_token: float = 0.0
    last_run: str = ""
    longest_pause: float = 0.0  # between two chunks of one reply (the restart's, on `a`)

    def apply(self, frame: dict) -> None:
        kind = frame["type"]
        if kind in ("message.created", "generation.finished"):
            self.messages[frame["message"]["id"]] = frame["message"]
        elif kind == "sync.state":
            self.syncs.append(time.monotonic())
            for message in frame["messages"]:
                self.messages[message["id"]] = message
            if frame["generation"]:
                run_id, text = frame["generation"]["run_id"], frame["generation"]["text"]
                held = self.text.get(run_id, "")
                if not text.startswith(held):  # shorter (a repeat to come) or different
                    self.faults.append(f"sync.state: {len(text)} chars after {len(held)} held")
                self.text[run_id] = text
        elif kind == "token":
            now = time.monotonic()
            if self.last_token and frame["run_id"] == self.last_run:
                self.longest_pause = max(self.longest_pause, now - self.last_token)
            self.last_token, self.last_run = now, frame["run_id"]
            held = self.text.get(frame["run_id"], "")
            if frame["index"] != len(held):
                what = "gap" if frame["index"] > len(held) else "repeat"
                self.faults.append(f"{what}: {len(held)} held, chunk at {frame['index']}")
            self.text[frame["run_id"]] = held[: frame["index"]] + frame["text"]

    async def read(self) -> None:
        try:
            async for raw in self.ws:
                self.apply(json.loads(raw))
        except websockets.ConnectionClosed as closed:
            self.closed = closed.rcvd.code if closed.rcvd else -1
        else:
            self.closed = self.ws.close_code

    def replies(self) -> list[dict]:
        return [m for m in self.messages.values() if m["role"] == "assistant"]


async def _until(check, what: str, wait: float = WAIT) -> None:
    deadline = time.monotonic() + wait
    while not check():
        assert time.monotonic() < deadline, f"waited {wait} s for {what}"
        await asyncio.sleep(0.05)


async def _poll(http: httpx.AsyncClient, path: str, seen: list, stop: asyncio.Event) -> None:
    """GET `path` every 0.2 s until told to stop; keep (status, seconds) of each answer."""
    for _ in range(int(WAIT / 0.2)):
        if stop.is_set():
            return
        asked = time.monotonic()
        try:
            status = (await http.get(path)).status_code
        except httpx.HTTPError as exc:
            status = type(exc).__name__
        seen.append((status, time.monotonic() - asked))
        await asyncio.sleep(0.2)


async def _restart_mid_reply(cluster, conversation_id, token) -> dict:
    headers = {"Authorization": f"Bearer {token}"}
    path = f"/ws/conversations/{conversation_id}/"
    watchers = [Watcher(node.name) for node in cluster.nodes]
    out: dict[str, Any] = {"watchers": watchers, "http": []}
    redis = Redis.from_url(cluster.redis.url, socket_timeout=5, decode_responses=True)
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(
            httpx.AsyncClient(base_url=cluster.url, headers=headers, timeout=WAIT)
        )
        for watcher, node in zip(watchers, cluster.nodes, strict=True):
            url = f"ws://127.0.0.1:{node.port}{path}"
            watcher.ws = await stack.enter_async_context(
                websockets.connect(url, additional_headers=headers)
            )
            await watcher.ws.send(json.dumps({"type": "ping"}))
            assert json.loads(await watcher.ws.recv()) == {"type": "pong"}
        readers = [asyncio.create_task(w.read()) for w in watchers]
        a, *_ = watchers
        await a.ws.send(json.dumps({"type": "message.send", "content": "slowly, please"}))
        # Every socket has part of the reply, far from all of it: restart Redis now.
        await _until(lambda: all(len(w.text) == 1 for w in watchers), "the first chunks")
        await _until(lambda: all(len(next(iter(w.text.values()))) > 200 for w in watchers), "text")
        [run_id] = a.text
        out["run_id"] = run_id
        redis.set(MARKER, "1")
        out["redis_before"] = redis.info("server")["run_id"]
        stop_polling = asyncio.Event()
        polling = _poll(http, "/api/v1/conversations", out["http"], stop_polling)
        poller = asyncio.create_task(polling)
        out["held_at_kill"] = {w.node: len(w.text[run_id]) for w in watchers}
        restarted_at = time.monotonic()
        await asyncio.to_thread(cluster.redis.stop)
        await asyncio.sleep(DOWN_SECONDS)
        await asyncio.to_thread(cluster.redis.start)
        out["redis_after"] = redis.info("server")["run_id"]
        out["marker_after"] = redis.get(MARKER)
        await _until(lambda: all(run_id in w.messages for w in watchers), "the stored reply")
        out["finished_after"] = time.monotonic() - restarted_at
        out["synced_after"] = {
            w.node: [round(t - restarted_at, 2) for t in w.syncs if t > restarted_at]
            for w in watchers
        }
        await asyncio.sleep(1.0)  # a late sync.state or chunk would show here
        stop_polling.set()
        await poller
        for turn, watcher in enumerate(watchers, start=2):  # a message sent on each process
            await watcher.ws.send(json.dumps({"type": "message.send", "content": f"on {turn}"}))
            await _until(lambda t=turn: all(len(w.replies()) == t for w in watchers), "a reply")
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    return out


def test_redis_restarting_empty_mid_reply_loses_and_garbles_nothing(cluster, alice):
    token = create_api_token(user=alice, name="ws").secret
    conversation = services.create_conversation(user=alice, title="Redis restarts")

    out = asyncio.run(_restart_mid_reply(cluster, conversation.id, token))

    # The restart was real: a new server (run id) without the key set before it.
    assert out["redis_after"] != out["redis_before"] and out["marker_after"] is None
    held = out["held_at_kill"]
    assert all(0 < n < len(LONG_REPLY) for n in held.values()), held  # really mid-reply
    stored = Message.objects.get(pk=out["run_id"])
    assert stored.content == LONG_REPLY and stored.finish_reason == "end_turn"
    watchers: list[Watcher] = out["watchers"]
    assert {w.node: w.faults for w in watchers} == {w.node: [] for w in watchers}
    assert {w.node: w.closed for w in watchers} == {w.node: None for w in watchers}
    for watcher in watchers:
        assert watcher.text[out["run_id"]] == LONG_REPLY, watcher.node  # what it streamed
        assert watcher.messages[out["run_id"]]["content"] == LONG_REPLY
        replies = watcher.replies()
        assert [m["finish_reason"] for m in replies] == ["end_turn"] * 4
    # The processes noticed the restart and caught their sockets up (docs: "Redis restarting").
    assert all(out["synced_after"].values()), out["synced_after"]
    statuses = {status for status, _ in out["http"]}
    assert statuses <= {200, 503}, out["http"]
    assert max(took for _, took in out["http"]) < 10
    assert out["http"][-1][0] == 200
    assert Message.objects.filter(conversation=conversation).count() == 8
    # The reply's own socket streams through the outage: its chunks wait for Redis 0.25 s
    # at most (realtime/progress.py, interprocess.py); they stalled 0.5 s before.
    own = next(w for w in watchers if w.node == "a")
    assert own.longest_pause < 0.4, own.longest_pause
    print(
        f"\nRedis restart: reply stored {out['finished_after']:.1f} s after the kill; "
        f"sync.state at {out['synced_after']}; HTTP {sorted(statuses, key=str)}; longest "
        f"pause between chunks { ({w.node: round(w.longest_pause, 1) for w in watchers}) } s"
    )
