"""Two Daphne processes sharing PostgreSQL and Redis: fan-out, stop and ownership across them.

Uses the real agent (OpenAI-compatible fake server), so it passes once
conversations.replies.turns is wired to agent.runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import websockets
from django.conf import settings

from accounts.tokens import create_api_token
from conversations import services
from conversations.models import Conversation, Message
from tests.conftest import require_service, uses_postgres
from tests.realtime.conftest import stitch
from tests.support.daphne import free_port, start_daphnes, stop, wait_for_port
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, default_responder, forced_tool
from tests.support.sockets import frames_until

pytestmark = pytest.mark.django_db(transaction=True)

BASE_DIR = Path(settings.BASE_DIR)
LONG_REPLY = " ".join(f"word{i}" for i in range(400))


def _responder(body):
    if forced_tool(body) is not None:
        return default_responder(body)
    return Reply(text=LONG_REPLY, chars_per_second=600, chunk_chars=6)


@pytest.fixture
def model_server():
    server = FakeOpenAI(_responder).start()
    yield server
    server.stop()


@pytest.fixture
def two_daphnes(tmp_path, model_server):
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    procs, ports = start_daphnes(tmp_path, model_server.base_url, settings.REDIS_URL)
    try:
        yield ports
    finally:
        stop(procs)


def _url(port: int, conversation_id) -> str:
    return f"ws://127.0.0.1:{port}/ws/conversations/{conversation_id}/"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@contextlib.asynccontextmanager
async def _joined(ports, conversation_id, token):
    """Yield a socket on each process, both joined (they have answered a ping)."""
    a_port, b_port = ports
    async with (
        websockets.connect(_url(a_port, conversation_id), additional_headers=_auth(token)) as a,
        websockets.connect(_url(b_port, conversation_id), additional_headers=_auth(token)) as b,
    ):
        for ws in (a, b):
            await ws.send(json.dumps({"type": "ping"}))
            assert json.loads(await ws.recv()) == {"type": "pong"}
        yield a, b


def _contiguous(frames: list[dict]) -> str:
    text = ""
    for frame in frames:
        if frame["type"] == "token":
            assert frame["index"] == len(text), "a chunk was dropped or repeated"
            text += frame["text"]
    return text


async def _scenario(ports, conversation_id, token, stranger_token) -> dict:
    b_port = ports[1]
    out: dict = {}
    async with _joined(ports, conversation_id, token) as (a, b):
        await a.send(json.dumps({"type": "message.send", "content": "hello"}))
        seen_a, seen_b = await asyncio.gather(
            frames_until(a, "generation.finished"), frames_until(b, "generation.finished")
        )
        out["first"] = (seen_a, seen_b)
        await a.send(json.dumps({"type": "message.send", "content": "again, slowly"}))
        frames = await frames_until(b, "token")
        frames += [json.loads(await b.recv()) for _ in range(3)]
        await b.send(json.dumps({"type": "generation.stop"}))
        frames += await frames_until(b, "generation.finished")
        out["stopped"] = frames
    async with websockets.connect(
        _url(b_port, conversation_id), additional_headers=_auth(stranger_token)
    ) as ws:
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 10)
        out["stranger_close"] = closed.value.rcvd.code
    return out


def test_two_processes_share_streams_stops_and_ownership(two_daphnes, alice, bob):
    token = create_api_token(user=alice, name="ws").secret
    stranger = create_api_token(user=bob, name="ws").secret
    conversation = services.create_conversation(user=alice, title="Across processes")
    out = asyncio.run(_scenario(two_daphnes, conversation.id, token, stranger))

    seen_a, seen_b = out["first"]
    text_b = _contiguous(seen_b)
    assert text_b and text_b == _contiguous(seen_a)
    finished = seen_b[-1]
    assert finished["finish_reason"] == "end_turn"
    stored = Message.objects.get(pk=finished["run_id"])
    assert stored.content == text_b == finished["message"]["content"]

    stopped = out["stopped"]
    assert stopped[-1]["finish_reason"] == "stopped"
    partial = _contiguous([f for f in stopped if f.get("run_id") == stopped[-1]["run_id"]])
    reply = Message.objects.get(pk=stopped[-1]["run_id"])
    assert reply.finish_reason == "stopped" and reply.content == partial
    assert 0 < len(partial) < len(LONG_REPLY)
    assert Message.objects.filter(conversation=conversation).count() == 4

    assert out["stranger_close"] == 4404


# --- faults across processes -------------------------------------------------------------
def _cancelled(tmp_path) -> bool:
    return any("run cancelled" in log.read_text() for log in tmp_path.glob("daphne-*.log"))


def _logged_errors(tmp_path) -> list[str]:
    lines = []
    for log in tmp_path.glob("daphne-*.log"):
        lines += [
            line for line in log.read_text().splitlines() if "ERROR" in line or "Traceback" in line
        ]
    return lines


async def _watch_a_dying_process(ports, conversation_id, token, kill) -> tuple[list[dict], float]:
    async with _joined(ports, conversation_id, token) as (a, b):
        await a.send(json.dumps({"type": "message.send", "content": "a long answer, please"}))
        frames = await frames_until(b, "token")
        frames += [json.loads(await b.recv()) for _ in range(3)]
        kill()
        killed_at = time.monotonic()
        frames += await frames_until(b, "generation.finished", wait=15)  # B sends nothing
        return frames, time.monotonic() - killed_at


def test_a_process_dying_mid_reply_is_finished_for_a_socket_on_another(
    tmp_path, model_server, alice
):
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    stale, beat = 2.0, 0.5
    procs, ports = start_daphnes(
        tmp_path,
        model_server.base_url,
        settings.REDIS_URL,
        CHAT_RUN_STALE_SECONDS=str(stale),
        CHAT_RUN_HEARTBEAT_SECONDS=str(beat),
    )
    try:
        token = create_api_token(user=alice, name="ws").secret
        conversation = services.create_conversation(user=alice, title="Dying")
        frames, waited = asyncio.run(
            _watch_a_dying_process(ports, conversation.id, token, procs[0].kill)
        )
    finally:
        stop(procs)
    finished = frames[-1]
    assert finished["finish_reason"] == "interrupted"
    assert waited < stale + 2 * beat + 1.5, f"took {waited:.1f} s"
    reply = Message.objects.get(pk=finished["run_id"])
    assert reply.finish_reason == "interrupted"
    # What B saw before the death is kept (Redis held the text so far).
    assert reply.content.startswith(_contiguous(frames)) and reply.content


async def _delete_while_replying(ports, conversation_id, token) -> dict:
    b_port = ports[1]
    out: dict = {}
    async with _joined(ports, conversation_id, token) as (a, b):
        await a.send(json.dumps({"type": "message.send", "content": "a long answer, please"}))
        await frames_until(a, "token")
        async with httpx.AsyncClient() as client:  # deleted through the OTHER process
            response = await client.delete(
                f"http://127.0.0.1:{b_port}/api/v1/conversations/{conversation_id}",
                headers=_auth(token),
            )
        out["status"] = response.status_code
        deleted_at = time.monotonic()
        for name, ws in (("a", a), ("b", b)):
            frames = await frames_until(ws, "conversation.deleted", wait=10)
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
            out[name] = (frames, closed.value.rcvd.code)
        out["took"] = time.monotonic() - deleted_at
    return out


def test_deleting_a_conversation_on_one_process_stops_its_reply_on_the_other(
    two_daphnes, model_server, alice, tmp_path
):
    token = create_api_token(user=alice, name="ws").secret
    conversation = services.create_conversation(user=alice, title="Doomed")
    out = asyncio.run(_delete_while_replying(two_daphnes, conversation.id, token))
    assert out["status"] == 204
    for name in ("a", "b"):
        frames, code = out[name]
        assert code == 4404
        assert not [f for f in frames if f["type"] == "generation.finished"]
    # The model stream is cancelled, not left to run out (LONG_REPLY takes ~5 s to write):
    # the run's process drops the connection and logs the cancelled run.
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline and not (model_server.disconnects and _cancelled(tmp_path)):
        time.sleep(0.1)
    assert model_server.disconnects >= 1 and _cancelled(tmp_path)
    assert not Message.objects.filter(conversation_id=conversation.id).exists()
    assert not Conversation.objects.filter(pk=conversation.id).exists()
    assert _logged_errors(tmp_path) == []


@pytest.fixture
def own_redis(tmp_path):
    """A Redis server of this test's own, on a free port, that the test may restart."""
    require_service(shutil.which("redis-server") is not None, "redis-server")
    port = free_port()
    cmd = [
        "redis-server",
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(tmp_path),
    ]

    def start() -> subprocess.Popen:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(port, proc, timeout=10)
        return proc

    server = {"proc": start(), "url": f"redis://127.0.0.1:{port}/0", "start": start}
    yield server
    server["proc"].kill()
    server["proc"].wait()


class _Client:
    """What a careful client keeps: stored messages by id, and the text of the running reply."""

    def __init__(self) -> None:
        self.messages: dict[str, dict] = {}
        self.text: dict[str, str] = {}
        self.frames: list[dict] = []

    def apply(self, frame: dict) -> None:
        self.frames.append(frame)
        if frame["type"] == "message.created" or frame["type"] == "generation.finished":
            self.messages[frame["message"]["id"]] = frame["message"]
        elif frame["type"] == "sync.state":
            for message in frame["messages"]:
                self.messages[message["id"]] = message
            if frame["generation"]:  # the protocol's rule: the longer text wins
                run_id, text = frame["generation"]["run_id"], frame["generation"]["text"]
                if len(text) > len(self.text.get(run_id, "")):
                    self.text[run_id] = text
        elif frame["type"] == "token":
            text = self.text.get(frame["run_id"], "")
            assert frame["index"] <= len(text), "a gap that no sync.state filled"
            self.text[frame["run_id"]] = text[: frame["index"]] + frame["text"]


async def _until_stored(ws, client: _Client, count: int, wait: float = 45) -> None:
    """Read frames until the client holds `count` stored messages, the last a finished reply."""
    async with asyncio.timeout(wait):
        while True:
            client.apply(json.loads(await ws.recv()))
            replies = [m for m in client.messages.values() if m["role"] == "assistant"]
            if len(client.messages) >= count and len(replies) == count // 2:
                return


async def _restart_redis_mid_reply(ports, conversation_id, token, redis, outage, b_sends) -> dict:
    clients = {"a": _Client(), "b": _Client()}
    async with _joined(ports, conversation_id, token) as (a, b):
        await a.send(json.dumps({"type": "message.send", "content": "a long answer, please"}))
        for frame in await frames_until(b, "token"):
            clients["b"].apply(frame)
        redis["proc"].kill()  # Redis goes away mid-reply…
        redis["proc"].wait()
        started = time.monotonic()
        stored = 2
        if b_sends:  # …A's reply ends, and B talks, while it is down…
            await _until_stored(a, clients["a"], 2)
            await b.send(json.dumps({"type": "message.send", "content": "meanwhile"}))
            async with asyncio.timeout(30):
                while not [
                    m for m in clients["b"].messages.values() if m["content"] == "meanwhile"
                ]:
                    clients["b"].apply(json.loads(await b.recv()))
            stored = 4
        await asyncio.sleep(max(0.0, outage - (time.monotonic() - started)))
        redis["proc"] = redis["start"]()  # …and comes back empty
        await asyncio.gather(
            _until_stored(a, clients["a"], stored), _until_stored(b, clients["b"], stored)
        )
        await a.send(json.dumps({"type": "message.send", "content": "and again"}))
        await asyncio.gather(
            _until_stored(a, clients["a"], stored + 2), _until_stored(b, clients["b"], stored + 2)
        )
    return clients


@pytest.mark.parametrize(("outage", "b_sends"), [(1.0, False), (5.0, False), (12.0, True)])
def test_redis_restarting_mid_reply_loses_no_reply(
    tmp_path, model_server, own_redis, alice, outage, b_sends
):
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    procs, ports = start_daphnes(
        tmp_path, model_server.base_url, own_redis["url"], CHAT_RUN_HEARTBEAT_SECONDS="1"
    )
    try:
        token = create_api_token(user=alice, name="ws").secret
        conversation = services.create_conversation(user=alice, title="Redis blip")
        clients = asyncio.run(
            _restart_redis_mid_reply(ports, conversation.id, token, own_redis, outage, b_sends)
        )
    finally:
        stop(procs)
    stored = {str(m.id): m for m in Message.objects.filter(conversation=conversation)}
    assert len(stored) == (6 if b_sends else 4)
    for client in clients.values():  # both sockets, on both processes, know every message
        assert set(client.messages) == set(stored)
        for message_id, message in client.messages.items():
            assert message["content"] == stored[message_id].content
    replies = [m for m in stored.values() if m.role == "assistant"]
    assert all(m.content == LONG_REPLY and m.finish_reason == "end_turn" for m in replies)


async def _join_mid_reply(ports, conversation_id, token) -> tuple[list[dict], list[dict]]:
    """Start a reply with the only socket on process A; join on B while it streams."""
    a_port, b_port = ports
    async with websockets.connect(
        _url(a_port, conversation_id), additional_headers=_auth(token)
    ) as a:
        await a.send(json.dumps({"type": "message.send", "content": "a long one"}))
        seen_a = await frames_until(a, "token")
        seen_a += [json.loads(await a.recv()) for _ in range(5)]  # A publishes no tokens now
        async with websockets.connect(
            _url(b_port, conversation_id), additional_headers=_auth(token)
        ) as b:
            await b.send(json.dumps({"type": "sync", "after": 0}))
            seen_b = await frames_until(b, "generation.finished")
        seen_a += await frames_until(a, "generation.finished")
    return seen_a, seen_b


def test_a_socket_joining_mid_reply_on_another_process_gets_every_word(two_daphnes, alice):
    token = create_api_token(user=alice, name="ws").secret
    conversation = services.create_conversation(user=alice, title="Late joiner")
    seen_a, seen_b = asyncio.run(_join_mid_reply(two_daphnes, conversation.id, token))
    state = next(f for f in seen_b if f["type"] == "sync.state")
    assert state["generation"] is not None  # B joined while the reply streamed
    run_id = state["generation"]["run_id"]
    text = stitch(seen_b, run_id, state["generation"]["text"])  # asserts there is no gap
    assert text == LONG_REPLY == seen_b[-1]["message"]["content"] == _contiguous(seen_a)
