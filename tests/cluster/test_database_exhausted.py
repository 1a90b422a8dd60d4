"""PostgreSQL full: it takes no new connection, while the ones already open keep working.

The login role of the tests is a superuser, which PostgreSQL exempts from `CONNECTION
LIMIT`; so each process's proxy answers every new connection the way a full server does
(`FATAL 53300 sorry, too many clients already`, after the startup packet) while the
open ones go on. Then a burst larger than the pools (HTTP reads and writes, and
websocket sends, on every process at once): every request must be answered within the
pool's timeout and a few seconds, with success or the app's 503 `unavailable` (a socket:
its reply, or closed 1013), never a 500, never 1011. Once PostgreSQL takes connections
again, everything works on every process with nobody restarting anything.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import time

import httpx
import psycopg
import pytest
import websockets
from django.conf import settings

from accounts.tokens import create_api_token
from agent import checkpoint
from conversations import services
from tests.cluster.conftest import HEARTBEAT_SECONDS, STALE_SECONDS
from tests.conftest import database_url_for_subprocesses

pytestmark = pytest.mark.django_db(transaction=True)

HTTP_PER_NODE = 30
SENDS_PER_NODE = 8
POOL_TIMEOUT = settings.DB_POOL_TIMEOUT  # the cluster's processes keep the default
BOUND = POOL_TIMEOUT + 4.0  # seconds for any answer while PostgreSQL is full
# A reply's end, at the latest, is a sum of waits. Its claim waits for the app's pool
# (answered within BOUND); its memory for the checkpointer's, which cannot open or grow
# either (the turn ends in an error); storing it for the app's pool again.
REPLY_BOUND = BOUND + checkpoint.POOL_TIMEOUT_SECONDS + POOL_TIMEOUT + 2.0
# A reply its process could not store meanwhile is stored as interrupted by a watchdog:
# once its heartbeat is stale, at that watchdog's next pass, whose beat and whose
# question for stale runs each wait for the pool too.
RECOVERED_BOUND = REPLY_BOUND + STALE_SECONDS + HEARTBEAT_SECONDS + 2 * POOL_TIMEOUT
SSL_REQUEST, GSSENC_REQUEST = 80877103, 80877104


def too_many_clients(client: socket.socket) -> None:
    """Answer a PostgreSQL client as a full server does: no encryption, then after the
    startup packet `FATAL 53300 sorry, too many clients already`, and close."""
    for _ in range(3):  # SSLRequest, GSSENCRequest, then the startup packet
        header = client.recv(8, socket.MSG_WAITALL)
        if len(header) < 8:
            return
        length, code = struct.unpack("!ii", header)
        if code in (SSL_REQUEST, GSSENC_REQUEST):
            client.sendall(b"N")
            continue
        client.recv(max(0, length - 8), socket.MSG_WAITALL)
        fields = b"SFATAL\0VFATAL\0C53300\0Msorry, too many clients already\0\0"
        client.sendall(b"E" + struct.pack("!i", len(fields) + 4) + fields)
        return


async def _http(http: httpx.AsyncClient, method: str, url: str, **kw) -> tuple:
    asked = time.monotonic()
    try:
        answer = await http.request(method, url, **kw)
    except httpx.HTTPError as exc:
        return (type(exc).__name__, time.monotonic() - asked, None)
    code = None
    if answer.status_code == 503:
        code = answer.json()["error"]["code"]
    return (answer.status_code, time.monotonic() - asked, code)


async def _send(port: int, conversation_id, headers: dict) -> tuple:
    """Open a socket and send a message; return how the reply ended (or how the socket
    was refused), when the first answer came, and when the end came."""
    url = f"ws://127.0.0.1:{port}/ws/conversations/{conversation_id}/"
    asked = time.monotonic()
    first = None
    try:
        async with websockets.connect(url, additional_headers=headers) as ws:
            await ws.send(json.dumps({"type": "message.send", "content": "hello"}))
            async with asyncio.timeout(RECOVERED_BOUND + 5):
                while True:
                    frame = json.loads(await ws.recv())
                    first = first or time.monotonic() - asked
                    if frame["type"] == "error":
                        outcome = f"error {frame['code']}"
                        break
                    if frame["type"] == "generation.finished":
                        outcome = frame["message"]["finish_reason"]
                        break
    except websockets.ConnectionClosed as closed:
        outcome = f"closed {closed.rcvd.code if closed.rcvd else None}"
    except TimeoutError:
        outcome = "hang"
    took = time.monotonic() - asked
    return (outcome, first or took, took)


async def _burst(cluster, token: str, conversations: dict) -> dict:
    headers = {"Authorization": f"Bearer {token}"}
    out: dict = {}
    async with httpx.AsyncClient(headers=headers, timeout=BOUND + 20) as http:
        calls = []
        for node in cluster.nodes:
            base = f"http://127.0.0.1:{node.port}/api/v1/conversations"
            first = conversations[node.name][0]
            for i in range(HTTP_PER_NODE):
                if i % 3 == 0:
                    calls.append(_http(http, "POST", base, json={"title": f"burst {i}"}))
                elif i % 3 == 1:
                    calls.append(_http(http, "GET", base))
                else:
                    calls.append(_http(http, "GET", f"{base}/{first}/messages"))
        sends = [
            _send(node.port, cid, headers)
            for node in cluster.nodes
            for cid in conversations[node.name]
        ]
        started = time.monotonic()
        results = await asyncio.gather(asyncio.gather(*calls), asyncio.gather(*sends))
        out["http"], out["ws"] = results
        out["took"] = time.monotonic() - started
    return out


async def _after(cluster, token: str, conversations: dict) -> dict:
    """Once PostgreSQL takes connections again: every process answers, and replies."""
    headers = {"Authorization": f"Bearer {token}"}
    out: dict = {"http": [], "ws": []}
    restored = time.monotonic()
    async with httpx.AsyncClient(headers=headers, timeout=20) as http:
        for node in cluster.nodes:
            url = f"http://127.0.0.1:{node.port}/api/v1/conversations"
            while (status := (await http.get(url)).status_code) != 200:
                assert time.monotonic() - restored < 15, f"{node.name} answers {status}"
                await asyncio.sleep(0.2)
            out["http"].append((await http.post(url, json={"title": "after"})).status_code)
    out["recovered_after"] = time.monotonic() - restored
    for node in cluster.nodes:
        out["ws"].append(await _send(node.port, conversations[node.name][-1], headers))
    return out


def _connect_through(port: int) -> str:
    """Connect to the test database through a proxy; return the error, or "connected"."""
    url = database_url_for_subprocesses()
    host_port = url.split("@", 1)[1].split("/", 1)[0]
    try:
        with psycopg.connect(url.replace(host_port, f"127.0.0.1:{port}"), connect_timeout=5):
            return "connected"
    except psycopg.OperationalError as exc:
        return str(exc)


def test_postgresql_full_gives_quick_answers_then_the_cluster_goes_on(cluster, alice):
    token = create_api_token(user=alice, name="burst").secret

    def conversations(count: int) -> dict:
        return {
            node.name: [
                services.create_conversation(user=alice, title=f"Full {node.name}{i}").id
                for i in range(count)
            ]
            for node in cluster.nodes
        }

    during, later = conversations(SENDS_PER_NODE), conversations(1)
    try:
        for node in cluster.nodes:
            node.database.answer_new = too_many_clients
        refused = _connect_through(cluster.nodes[0].database.port)
        out = asyncio.run(_burst(cluster, token, during))
    finally:
        for node in cluster.nodes:
            node.database.answer_new = None
    answered = {node.name: node.database.answered for node in cluster.nodes}
    after = asyncio.run(_after(cluster, token, later))

    assert "too many clients" in refused  # PostgreSQL was full, as a client sees it
    assert all(answered.values()), answered  # every pool tried to grow, and was refused
    http_statuses = sorted({status for status, _, _ in out["http"]}, key=str)
    ws_outcomes = sorted({outcome for outcome, _, _ in out["ws"]})
    slowest = max(took for _, took, _ in out["http"])
    print(
        f"\nPostgreSQL full: {len(out['http'])} HTTP + {len(out['ws'])} sends in "
        f"{out['took']:.1f} s; HTTP {http_statuses} (slowest {slowest:.1f} s), replies "
        f"{ws_outcomes} (first answer ≤ {max(f for _, f, _ in out['ws']):.1f} s, end ≤ "
        f"{max(t for _, _, t in out['ws']):.1f} s); connections refused {answered}; "
        f"recovered after {after['recovered_after']:.1f} s"
    )
    for status, took, code in out["http"]:
        assert status in (200, 201, 503) and took < BOUND, (status, took)
        assert status != 503 or code == "unavailable"
    for outcome, first, took in out["ws"]:
        # Refused (closed 1013, "try again later") or accepted, then ended: never 1011.
        assert outcome in (
            "end_turn",
            "error",
            "interrupted",
            "closed 1013",
            "error unavailable",
        ), outcome
        ended_by = RECOVERED_BOUND if outcome == "interrupted" else REPLY_BOUND
        assert first < BOUND and took < ended_by, (outcome, first, took)
    assert after["http"] == [201, 201, 201]
    assert [outcome for outcome, _, _ in after["ws"]] == ["end_turn"] * 3
