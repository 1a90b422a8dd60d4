"""Two Daphne processes sharing PostgreSQL and Redis: fan-out, stop and ownership across them.

Uses the real agent (OpenAI-compatible fake server), so it passes once
conversations.agent_service is wired to agent.runner.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import websockets
from django.conf import settings

from accounts.tokens import create_api_token
from conversations import services
from conversations.models import Message
from tests.conftest import require_service, uses_postgres
from tests.support.fake_openai import FakeOpenAI, Reply, default_responder, forced_tool

pytestmark = pytest.mark.django_db(transaction=True)

BASE_DIR = Path(settings.BASE_DIR)
LONG_REPLY = " ".join(f"word{i}" for i in range(400))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _database_url() -> str:
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _responder(body):
    if forced_tool(body) is not None:
        return default_responder(body)
    return Reply(text=LONG_REPLY, chars_per_second=600, chunk_chars=6)


def _wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"daphne on {port} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"daphne on {port} did not start")


@pytest.fixture
def two_daphnes(tmp_path):
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    server = FakeOpenAI(_responder).start()
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": server.base_url,
        "CHAT_VAR_DIR": str(tmp_path),
        "CHAT_RATE_LIMIT": "1000/m",
        "DJANGO_SETTINGS_MODULE": "chatsite.settings",
    }
    procs, ports = [], []
    for name in ("a", "b"):
        port = _free_port()
        log = open(tmp_path / f"daphne-{name}.log", "w")  # noqa: SIM115
        cmd = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
        procs.append(
            subprocess.Popen(
                [*cmd, "chatsite.asgi:application"], cwd=BASE_DIR, env=env, stdout=log, stderr=log
            )
        )
        ports.append(port)
    try:
        for port, proc in zip(ports, procs, strict=True):
            _wait_for_port(port, proc)
        yield ports
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        server.stop()


def _url(port: int, conversation_id) -> str:
    return f"ws://127.0.0.1:{port}/ws/conversations/{conversation_id}/"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _recv_until(ws, frame_type: str, wait: float = 30) -> list[dict]:
    frames = []
    async with asyncio.timeout(wait):
        while True:
            frames.append(json.loads(await ws.recv()))
            if frames[-1]["type"] == frame_type:
                return frames


def _contiguous(frames: list[dict]) -> str:
    text = ""
    for frame in frames:
        if frame["type"] == "token":
            assert frame["index"] == len(text), "a chunk was dropped or repeated"
            text += frame["text"]
    return text


async def _scenario(ports, conversation_id, token, stranger_token) -> dict:
    a_port, b_port = ports
    out: dict = {}
    async with (
        websockets.connect(_url(a_port, conversation_id), additional_headers=_auth(token)) as a,
        websockets.connect(_url(b_port, conversation_id), additional_headers=_auth(token)) as b,
    ):
        for ws in (a, b):  # both joined once they answer
            await ws.send(json.dumps({"type": "ping"}))
            assert json.loads(await ws.recv()) == {"type": "pong"}
        await a.send(json.dumps({"type": "message.send", "content": "hello"}))
        seen_a, seen_b = await asyncio.gather(
            _recv_until(a, "generation.finished"), _recv_until(b, "generation.finished")
        )
        out["first"] = (seen_a, seen_b)
        await a.send(json.dumps({"type": "message.send", "content": "again, slowly"}))
        frames = await _recv_until(b, "token")
        frames += [json.loads(await b.recv()) for _ in range(3)]
        await b.send(json.dumps({"type": "generation.stop"}))
        frames += await _recv_until(b, "generation.finished")
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
