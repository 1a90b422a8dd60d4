"""Realtime fixtures: a fake agent turn with the runner's contract, sockets, cleanup."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections

from accounts.tokens import create_api_token
from conversations import services
from conversations.realtime import ratelimit
from conversations.realtime.hub import aclose_hub
from conversations.realtime.redis import aclose_redis
from tests.conftest import require_service
from tests.support.fake_turn import FakeAgent
from tests.support.redis_server import RedisServer, redis_available


@pytest.fixture
def fake_agent(monkeypatch) -> FakeAgent:
    agent = FakeAgent()
    monkeypatch.setattr("conversations.replies.turns.astart_turn", agent)
    return agent


@pytest.fixture(autouse=True)
async def realtime_cleanup():
    """Close the hub, Redis clients and the DB thread's connections after each test."""
    ratelimit.reset_local_rates()
    yield
    await aclose_hub()
    await aclose_redis()
    from agent.checkpoint import close_checkpointers

    await close_checkpointers()  # its SQLite thread would keep the test process alive
    await sync_to_async(connections.close_all)()


@pytest.fixture
async def flush_redis(settings):
    """Start from empty Redis keys of ours (rate counters, reply progress)."""
    from conversations.realtime.redis import get_redis

    client = get_redis()
    if client is not None:
        keys = [k async for k in client.scan_iter("chat:*")]
        if keys:
            await client.delete(*keys)


@database_sync_to_async
def make_token(user: Any) -> str:
    return create_api_token(user=user, name="ws").secret


@database_sync_to_async
def make_conversation(user: Any, title: str = "Chat") -> Any:
    return services.create_conversation(user=user, title=title)


async def connected(conversation_id: Any, token: str | None = None):
    """Return a communicator on the conversation socket, already accepted."""
    comm = open_socket(conversation_id, token=token)
    assert (await comm.connect())[0]
    return comm


def open_socket(conversation_id: Any, *, token: str | None = None, headers=None):
    """Return a communicator on the conversation socket (Bearer when `token` is given)."""
    from chatsite.asgi import application

    all_headers = list(headers or [])
    if token:
        all_headers.append((b"authorization", f"Bearer {token}".encode()))
    return WebsocketCommunicator(
        application, f"/ws/conversations/{conversation_id}/", headers=all_headers
    )


async def receive(comm: WebsocketCommunicator, wait: float = 5) -> dict[str, Any]:
    return json.loads(await comm.receive_from(timeout=wait))


async def receive_until(
    comm: WebsocketCommunicator, frame_type: str, wait: float = 5
) -> list[dict[str, Any]]:
    """Collect frames up to and including the first of `frame_type`; a wait of more than
    `wait` seconds for the next frame fails, naming the frames that did come."""
    frames = []
    while True:
        try:
            frame = await receive(comm, wait)
        except TimeoutError:
            seen = [f.get("type") for f in frames]
            raise AssertionError(f"no {frame_type!r} frame within {wait} s; came: {seen}") from None
        frames.append(frame)
        if frame["type"] == frame_type:
            return frames


def stitch(frames: list[dict[str, Any]], run_id: str, text: str = "") -> str:
    """Assemble a reply from token frames, asserting nothing is missing or repeated."""
    for frame in frames:
        if frame["type"] != "token" or frame["run_id"] != run_id:
            continue
        assert frame["index"] <= len(text), f"gap before index {frame['index']}"
        end = frame["index"] + len(frame["text"])
        if end > len(text):
            assert text[frame["index"] :] == frame["text"][: len(text) - frame["index"]]
            text += frame["text"][len(text) - frame["index"] :]
    return text


@pytest.fixture
def redis_server(tmp_path):
    """A redis-server of the test's own (no persistence): a test may stop and restart it."""
    require_service(redis_available(), "redis-server")
    server = RedisServer(tmp_path).start()
    yield server
    server.stop()
