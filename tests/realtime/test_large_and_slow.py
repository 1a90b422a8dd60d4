"""States and replies larger than a websocket frame, and clients that never read.

Through real Daphne processes and python-websockets with its default 1 MiB frame limit
(as most clients have): nothing the server sends may be larger than that, whatever the
size of a conversation or a reply, and a client that stops reading cannot grow the
server process.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import httpx
import pytest
import websockets
from django.conf import settings

from accounts.tokens import create_api_token
from conversations import services
from tests.conftest import require_service, uses_postgres
from tests.support.daphne import start_daphnes, stop
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, default_responder, forced_tool
from tests.support.seed import add_message

pytestmark = pytest.mark.django_db(transaction=True)

# 1.5 MB of mostly distinct words: its full-text vector alone would be over PostgreSQL's
# 1 MiB tsvector limit (migration 0011 bounds it), and no frame may carry it whole.
HUGE_REPLY = "".join(f"line {i:06d} k{i * 7:07d} v{i * 13:07d} end.\n" for i in range(40_000))


def _responder(body):
    if forced_tool(body) is not None:
        return default_responder(body)
    return Reply(text=HUGE_REPLY, chunk_chars=4000)


@pytest.fixture
def model_server():
    server = FakeOpenAI(_responder).start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _services():
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")


def _ws(port: int, conversation_id) -> str:
    return f"ws://127.0.0.1:{port}/ws/conversations/{conversation_id}/"


def _long_history(user, *, messages: int = 40, chars: int = 30_000, giant: int = 0):
    conversation = services.create_conversation(user=user, title="Long pasted texts")
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        add_message(conversation_id=conversation.pk, role=role, content=f"{i:03d}" + "가" * chars)
    if giant:
        add_message(conversation_id=conversation.pk, role="assistant", content="나" * giant)
    return conversation


async def _sync_all(ws) -> tuple[list[dict], int]:
    """Sync from 0, page by page; return every message and how many pages it took."""
    messages, after, pages = [], 0, 0
    while True:
        await ws.send(json.dumps({"type": "sync", "after": after}))
        while (frame := json.loads(await asyncio.wait_for(ws.recv(), 30)))["type"] != "sync.state":
            pass
        pages += 1
        messages += frame["messages"]
        if not frame["has_more"]:
            return messages, pages
        after = frame["messages"][-1]["sequence_number"]


def test_a_state_larger_than_a_frame_reaches_the_client_in_pages(tmp_path, model_server, alice):
    conversation = _long_history(alice, giant=600_000)
    token = create_api_token(user=alice, name="ws").secret
    headers = {"Authorization": f"Bearer {token}"}
    procs, ports = start_daphnes(tmp_path, model_server.base_url, settings.REDIS_URL, count=1)

    async def scenario():
        async with websockets.connect(
            _ws(ports[0], conversation.pk), additional_headers=headers
        ) as ws:
            messages, pages = await _sync_all(ws)
            await ws.send(json.dumps({"type": "ping"}))
            pong = json.loads(await asyncio.wait_for(ws.recv(), 10))
        giant = messages[-1]
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{ports[0]}", headers=headers
        ) as http:
            answer = await http.get(
                f"/api/v1/conversations/{conversation.pk}/messages",
                params={"branch": "all", "after": giant["sequence_number"] - 1, "limit": 1},
            )
        return messages, pages, pong, answer.json()["items"][0]

    try:
        messages, pages, pong, whole = asyncio.run(scenario())
    finally:
        stop(procs)
    assert pages > 1 and pong == {"type": "pong"}  # several frames, the socket still open
    assert [m["sequence_number"] for m in messages] == list(range(1, 42))
    assert all(len(m["content"]) == 30_003 and not m.get("truncated") for m in messages[:40])
    giant = messages[-1]
    assert giant["truncated"] is True and 0 < len(giant["content"]) < 600_000
    assert whole["id"] == giant["id"] and whole["content"] == "나" * 600_000


def test_a_reply_larger_than_a_frame_streams_and_is_announced_everywhere(
    tmp_path, model_server, alice
):
    conversation = services.create_conversation(user=alice, title="A huge answer")
    token = create_api_token(user=alice, name="ws").secret
    headers = {"Authorization": f"Bearer {token}"}
    procs, ports = start_daphnes(tmp_path, model_server.base_url, settings.REDIS_URL)

    async def watch(ws) -> tuple[str, dict, list[dict]]:
        text, created = "", []
        async with asyncio.timeout(120):
            while True:
                frame = json.loads(await ws.recv())
                if frame["type"] == "token":
                    assert frame["index"] == len(text), "a chunk was lost or repeated"
                    text += frame["text"]
                elif frame["type"] == "message.created":
                    created.append(frame["message"])
                elif frame["type"] == "generation.finished":
                    return text, frame, created

    async def scenario():
        async with (
            websockets.connect(_ws(ports[0], conversation.pk), additional_headers=headers) as a,
            websockets.connect(_ws(ports[1], conversation.pk), additional_headers=headers) as b,
        ):
            for ws in (a, b):
                await ws.send(json.dumps({"type": "ping"}))
                assert json.loads(await ws.recv()) == {"type": "pong"}
            await a.send(json.dumps({"type": "message.send", "content": "write a lot"}))
            return await asyncio.gather(watch(a), watch(b))

    try:
        seen = asyncio.run(scenario())
    finally:
        stop(procs)
    for text, finished, created in seen:
        assert text == HUGE_REPLY
        assert finished["finish_reason"] == "end_turn"
        assert finished["message"]["truncated"] is True
        assert any(m["id"] == finished["run_id"] for m in created)
    stored = services.Message.objects.get(pk=seen[0][1]["run_id"])
    assert stored.content == HUGE_REPLY


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_client_that_never_reads_is_closed_and_the_process_stays_small(
    tmp_path, model_server, alice
):
    conversation = _long_history(alice)
    token = create_api_token(user=alice, name="ws").secret
    headers = {"Authorization": f"Bearer {token}"}
    procs, ports = start_daphnes(
        tmp_path,
        model_server.base_url,
        settings.REDIS_URL,
        count=1,
        CHAT_SYNC_RATE_LIMIT="1000/m",
        CHAT_SOCKET_BACKLOG_BYTES=os.environ.get("TEST_BACKLOG_BYTES", str(8 * 1024 * 1024)),
    )
    pid = procs[0].pid

    async def scenario():
        async with websockets.connect(
            _ws(ports[0], conversation.pk), additional_headers=headers
        ) as ws:
            await _sync_all(ws)  # warm: every code path has run once
        await asyncio.sleep(1)
        before = _rss_kib(pid)
        # max_queue=1: the client library stops reading once one frame waits, as a
        # client that never reads does; the server's frames pile up in its buffers.
        async with websockets.connect(
            _ws(ports[0], conversation.pk), additional_headers=headers, max_queue=1
        ) as ws:
            try:
                for _ in range(300):
                    await ws.send(json.dumps({"type": "sync", "after": 0}))
                    await asyncio.sleep(0.01)
            except websockets.ConnectionClosed:
                pass
            await asyncio.sleep(3)
            closed = ws.state is websockets.State.CLOSED or ws.close_code is not None
        peak = _rss_kib(pid)
        async with websockets.connect(
            _ws(ports[0], conversation.pk), additional_headers=headers
        ) as ws:
            messages, _ = await _sync_all(ws)  # and the process still serves everyone else
        return before, peak, closed, len(messages)

    try:
        before, after, closed, synced = asyncio.run(scenario())
        log = (tmp_path / "daphne-a.log").read_text()
    finally:
        stop(procs)
    grown_mb = (after - before) / 1024
    print(f"daphne RSS {before / 1024:.0f} MB → {after / 1024:.0f} MB")
    assert "left too much unread" in log
    assert synced == 40
    assert grown_mb < 64, f"the process grew by {grown_mb:.0f} MB"
    assert closed


def test_sync_is_rate_limited(tmp_path, model_server, alice):
    conversation = services.create_conversation(user=alice, title="Syncing in a loop")
    token = create_api_token(user=alice, name="ws").secret
    headers = {"Authorization": f"Bearer {token}"}
    procs, ports = start_daphnes(
        tmp_path, model_server.base_url, settings.REDIS_URL, count=1, CHAT_SYNC_RATE_LIMIT="5/m"
    )

    async def scenario():
        async with websockets.connect(
            _ws(ports[0], conversation.pk), additional_headers=headers
        ) as ws:
            kinds = []
            for _ in range(6):
                await ws.send(json.dumps({"type": "sync", "after": 0}))
                kinds.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
            return kinds

    try:
        frames = asyncio.run(scenario())
    finally:
        stop(procs)
    assert [f["type"] for f in frames] == ["sync.state"] * 5 + ["error"]
    assert frames[-1]["code"] == "rate_limited" and frames[-1]["retry_after"] >= 1
