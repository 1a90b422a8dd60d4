"""A client that reconnects mid-reply and sends `sync` gets the exact text: the snapshot in
`sync.state` and the live `token` frames after it meet exactly (nothing lost, nothing
repeated), on one process, across two, and with Redis slowed by a proxy.

Each round: open a socket, send, wait for the reply's first token, close it; open a new
socket (on the same or the other process), `sync` with the last sequence number seen, and
stitch: after `sync.state`, every `token` of the run must start where the text so far
ends. Frames that arrived before the `sync.state` are the client's to throw away.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field

import httpx
import pytest
import websockets
from django.conf import settings

from accounts.tokens import create_api_token
from tests.conftest import require_service, uses_postgres
from tests.support.daphne import free_port, start_daphnes, stop
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, default_responder, forced_tool
from tests.support.sockets import frames_until

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 50
REPLY = " ".join(f"word{i}" for i in range(150))


def _responder(body):
    if forced_tool(body) is not None:
        return default_responder(body)
    return Reply(text=REPLY, chars_per_second=2500, chunk_chars=7)


@dataclass
class Tally:
    rounds: int = 0
    gaps: list[str] = field(default_factory=list)
    repeats: list[str] = field(default_factory=list)
    wrong_text: list[str] = field(default_factory=list)


def _ws(port: int, conversation_id: str) -> str:
    return f"ws://127.0.0.1:{port}/ws/conversations/{conversation_id}/"


async def _round(
    http: httpx.AsyncClient, ports: tuple[int, int], headers: dict, tally: Tally
) -> None:
    answer = await http.post("/api/v1/conversations", json={"title": "reconnect"})
    conversation_id = answer.json()["id"]
    async with websockets.connect(_ws(ports[0], conversation_id), additional_headers=headers) as a:
        await a.send(json.dumps({"type": "message.send", "content": "tell me a long story"}))
        seen = await frames_until(a, "token")
    last_seq = max(
        (f["message"]["sequence_number"] for f in seen if f["type"] == "message.created"),
        default=0,
    )
    async with websockets.connect(_ws(ports[1], conversation_id), additional_headers=headers) as b:
        await b.send(json.dumps({"type": "sync", "after": last_seq}))
        frames = await frames_until(b, "sync.state")
        state = frames[-1]
        if state["generation"] is None:  # already stored: the reply is among the messages
            replies = [m for m in state["messages"] if m["role"] == "assistant"]
            if [m["content"] for m in replies] != [REPLY]:
                tally.wrong_text.append(f"{conversation_id}: finished, not in sync.state")
            tally.rounds += 1
            return
        run_id, text = state["generation"]["run_id"], state["generation"]["text"]
        for frame in await frames_until(b, "generation.finished"):
            if frame["type"] == "token" and frame["run_id"] == run_id:
                if frame["index"] > len(text):
                    tally.gaps.append(f"text {len(text)}, next token at {frame['index']}")
                    text = text.ljust(frame["index"], "?")
                elif frame["index"] < len(text):
                    tally.repeats.append(f"text {len(text)}, next token at {frame['index']}")
                    text = text[: frame["index"]]
                text += frame["text"]
            elif (
                frame["type"] == "generation.finished"
                and frame["run_id"] == run_id
                and (text != frame["message"]["content"] or text != REPLY)
            ):
                tally.wrong_text.append(f"{conversation_id}: stitched text differs")
    tally.rounds += 1


async def _rounds(base: str, ports: tuple[int, int], token: str, rounds: int) -> Tally:
    headers = {"Authorization": f"Bearer {token}"}
    tally = Tally()
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as http:
        for _ in range(rounds):
            await _round(http, ports, headers, tally)
    return tally


class DelayingProxy:
    """A TCP proxy that holds every chunk for `delay` seconds each way (a slow Redis)."""

    def __init__(self, target_port: int, delay: float) -> None:
        self.target_port, self.delay, self.port = target_port, delay, free_port()
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> DelayingProxy:
        self.thread.start()
        self.ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self._client, "127.0.0.1", self.port)
        )
        self.ready.set()
        try:
            self.loop.run_forever()
        finally:
            server.close()

    async def _client(self, reader, writer) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, reader, writer) -> None:
        try:
            while data := await reader.read(65536):
                await asyncio.sleep(self.delay)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


def _redis_port_and_db() -> tuple[int, str]:
    from urllib.parse import urlparse

    url = urlparse(settings.REDIS_URL)
    return url.port or 6379, url.path or "/0"


def _run(tmp_path, model_server, user, *, processes: int, redis_url: str) -> Tally:
    procs, ports = start_daphnes(
        tmp_path, model_server.base_url, redis_url, count=processes, CHAT_RATE_LIMIT="10000/m"
    )
    pair = (ports[0], ports[-1])
    try:
        token = create_api_token(user=user, name="reconnect").secret
        return asyncio.run(_rounds(f"http://127.0.0.1:{ports[0]}", pair, token, ROUNDS))
    finally:
        stop(procs)


@pytest.fixture
def model_server():
    server = FakeOpenAI(_responder).start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _services():
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")


def _assert_exact(tally: Tally) -> None:
    assert tally.rounds == ROUNDS
    assert not tally.gaps, f"{len(tally.gaps)} gaps in {ROUNDS} rounds: {tally.gaps[:3]}"
    assert not tally.repeats, f"{len(tally.repeats)} repeats: {tally.repeats[:3]}"
    assert not tally.wrong_text, tally.wrong_text[:3]


def test_reconnecting_mid_reply_on_one_process_loses_nothing(tmp_path, model_server, alice):
    tally = _run(tmp_path, model_server, alice, processes=1, redis_url=settings.REDIS_URL)
    _assert_exact(tally)


def test_reconnecting_mid_reply_on_another_process_loses_nothing(tmp_path, model_server, alice):
    tally = _run(tmp_path, model_server, alice, processes=2, redis_url=settings.REDIS_URL)
    _assert_exact(tally)


def test_reconnecting_with_redis_slowed_loses_nothing(tmp_path, model_server, alice):
    port, db = _redis_port_and_db()
    with DelayingProxy(port, delay=0.004) as proxy:
        slow = f"redis://127.0.0.1:{proxy.port}{db}"
        tally = _run(tmp_path, model_server, alice, processes=2, redis_url=slow)
    _assert_exact(tally)
