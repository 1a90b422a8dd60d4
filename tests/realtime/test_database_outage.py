"""PostgreSQL out of reach, through a real Daphne process (SPEC: Operations): HTTP answers 503
`unavailable` within seconds, sockets close 1013, /healthz names the database, the outage is
logged once, and the process recovers by itself once the database is back."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
import websockets
from django.conf import settings
from django.test import Client

from accounts.tokens import create_api_token
from conversations import services, shares
from tests.conftest import require_service, uses_postgres
from tests.support.daphne import database_url, start_daphnes, stop
from tests.support.sockets import close_code
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.django_db(transaction=True)

QUICK = 5.0  # seconds: SPEC's "quickly"; DB_POOL_TIMEOUT is 3


@pytest.fixture
def database_proxy():
    """A proxy in front of the test database that the test can take away and bring back."""
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    db = settings.DATABASES["default"]
    proxy = TcpProxy((db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432))).start()
    yield proxy
    proxy.stop()


@pytest.fixture
def daphne(tmp_path, database_proxy):
    """One Daphne process (production settings) whose database is behind the proxy."""
    direct = database_url()
    host_port = direct.split("@", 1)[1].split("/", 1)[0]
    url = direct.replace(host_port, f"127.0.0.1:{database_proxy.port}")
    procs, ports = start_daphnes(
        tmp_path,
        "http://127.0.0.1:9/v1",  # no reply is asked for
        settings.REDIS_URL or "",
        count=1,
        DATABASE_URL=url,
        CHECKPOINT_URL=url,
        DJANGO_DEBUG="0",
        DJANGO_SECURE_SSL_REDIRECT="0",
    )
    try:
        yield ports[0]
    finally:
        stop(procs)


async def _timed(coro):
    started = time.monotonic()
    result = await coro
    return result, time.monotonic() - started


async def _outage(port, proxy, *, token, session, conversation_id, share_token) -> dict:
    base = f"http://127.0.0.1:{port}"
    ws_url = f"ws://127.0.0.1:{port}/ws/conversations/{conversation_id}/"
    bearer = {"Authorization": f"Bearer {token}"}
    page = {"Cookie": f"sessionid={session}", "Accept": "text/html"}
    out: dict = {}
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        out["healthy"] = (await http.get("/healthz")).json()
        assert (await http.get("/api/v1/conversations", headers=bearer)).status_code == 200
        async with websockets.connect(ws_url, additional_headers=bearer) as before:
            await before.send(json.dumps({"type": "ping"}))
            assert json.loads(await before.recv()) == {"type": "pong"}

            proxy.stop()  # PostgreSQL goes away

            out["api"] = await _timed(http.get("/api/v1/conversations", headers=bearer))
            out["page"] = await _timed(http.get("/conversations/", headers=page))
            out["share"] = await _timed(http.get(f"/s/{share_token}/", headers=page))
            out["healthz"] = await _timed(http.get("/healthz"))
            # A socket already open asks for something that needs the database.
            await before.send(json.dumps({"type": "sync", "after": 0}))
            out["open_socket"] = await _timed(close_code(before, wait=QUICK + 5))
        async with websockets.connect(ws_url, additional_headers=bearer) as during:
            out["new_socket"] = await _timed(close_code(during, wait=QUICK + 5))

        proxy.start()  # …and comes back
        started = time.monotonic()
        while (await http.get("/api/v1/conversations", headers=bearer)).status_code != 200:
            assert time.monotonic() - started < 15, "did not recover"
            await asyncio.sleep(0.2)
        out["recovered_after"] = time.monotonic() - started
        out["healthz_after"] = (await http.get("/healthz")).status_code
        async with websockets.connect(ws_url, additional_headers=bearer) as after:
            await after.send(json.dumps({"type": "ping"}))
            out["pong_after"] = json.loads(await after.recv())
    return out


def test_postgresql_out_of_reach_answers_503_and_1013_quickly_then_recovers(
    daphne, database_proxy, tmp_path, alice
):
    token = create_api_token(user=alice, name="ws").secret
    conversation = services.create_conversation(user=alice, title="Outage")
    share = shares.create_share(user=alice, conversation_id=conversation.id)
    browser = Client()
    browser.force_login(alice)
    session = browser.cookies[settings.SESSION_COOKIE_NAME].value

    out = asyncio.run(
        _outage(
            daphne,
            database_proxy,
            token=token,
            session=session,
            conversation_id=conversation.id,
            share_token=share.token,
        )
    )

    assert out["healthy"]["db"] == "ok"
    api, took = out["api"]
    assert api.status_code == 503 and took < QUICK, took
    assert api.json()["error"]["code"] == "unavailable"
    assert api.headers["Retry-After"]
    for name in ("page", "share"):  # a page, and the share link's reader role
        page, took = out[name]
        assert page.status_code == 503 and took < QUICK, (name, took)
        assert page.headers["Content-Type"].startswith("text/html")
    health, took = out["healthz"]
    assert health.status_code == 503 and took < QUICK
    assert health.json()["db"] == "down"
    for name in ("open_socket", "new_socket"):
        code, took = out[name]
        assert code == 1013 and took < QUICK, (name, code, took)

    assert out["recovered_after"] < 10
    assert out["healthz_after"] == 200
    assert out["pong_after"] == {"type": "pong"}

    log = (tmp_path / "daphne-a.log").read_text()
    assert "Traceback" not in log, log
    assert log.count("PostgreSQL unreachable") == 1, log
    assert log.count("PostgreSQL reachable again") == 1, log
