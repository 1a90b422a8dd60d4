"""Redis out of reach while a Daphne process serves sockets and replies: one warning when it
goes, one when it is back, and no traceback (channels_redis' receiver alone logged one a
second); sockets that need the channel layer meanwhile close 1013."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
import websockets

from accounts.tokens import create_api_token
from conversations import services
from tests.conftest import require_service, uses_postgres
from tests.support.daphne import start_daphnes, stop
from tests.support.fake_openai import FakeOpenAI
from tests.support.sockets import close_code, frame_of

pytestmark = pytest.mark.django_db(transaction=True)

OUTAGE_SECONDS = 12.0


@pytest.fixture
def daphne(tmp_path, redis_server):
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    with FakeOpenAI() as model:
        procs, ports = start_daphnes(
            tmp_path, model.base_url, redis_server.url, count=1, CHAT_RUN_HEARTBEAT_SECONDS="1"
        )
        try:
            yield ports[0]
        finally:
            stop(procs)


async def _outage(port, redis_server, *, token, conversation_id) -> dict:
    bearer = {"Authorization": f"Bearer {token}"}
    url = f"ws://127.0.0.1:{port}/ws/conversations/{conversation_id}/"
    list_url = f"ws://127.0.0.1:{port}/ws/user/"
    out: dict = {}
    async with (
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
        websockets.connect(url, additional_headers=bearer) as ws,
    ):
        await ws.send(json.dumps({"type": "message.send", "content": "before"}))
        await frame_of(ws, "generation.finished")

        redis_server.stop()
        started = time.monotonic()
        # Traffic while Redis is down: replies, the API, the list socket, new sockets.
        for n in range(3):
            await ws.send(json.dumps({"type": "message.send", "content": f"during {n}"}))
            out[f"during {n}"] = (await frame_of(ws, "generation.finished"))["finish_reason"]
            assert (await http.get("/api/v1/conversations", headers=bearer)).status_code == 200
        async with websockets.connect(list_url, additional_headers=bearer) as listing:
            out["list_socket"] = await close_code(listing)
        out["health_down"] = (await http.get("/healthz")).json()
        await asyncio.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - started)))

        redis_server.start()
        await asyncio.sleep(3)  # the watchdog (every second here) subscribes again
        await ws.send(json.dumps({"type": "message.send", "content": "after"}))
        out["after"] = (await frame_of(ws, "generation.finished"))["finish_reason"]
        out["health_up"] = (await http.get("/healthz")).json()
    return out


def test_a_redis_outage_is_logged_once_and_its_end_once(daphne, redis_server, tmp_path, alice):
    token = create_api_token(user=alice, name="ws").secret
    conversation = services.create_conversation(user=alice, title="Redis outage")
    out = asyncio.run(_outage(daphne, redis_server, token=token, conversation_id=conversation.id))

    assert [out[f"during {n}"] for n in range(3)] == ["end_turn"] * 3  # replies go on
    assert out["list_socket"] == 1013  # it needs the channel layer: try again later
    assert out["health_down"] == {"db": "ok", "redis": "down"}
    assert out["after"] == "end_turn"
    assert out["health_up"] == {"db": "ok", "redis": "ok"}
    log = (tmp_path / "daphne-a.log").read_text()
    assert "Traceback" not in log, log
    assert log.count("Redis unreachable") == 1, log
    assert log.count("Redis reachable again") == 1, log
