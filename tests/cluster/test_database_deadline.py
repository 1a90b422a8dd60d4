"""PostgreSQL that takes the app's packets and never answers (a frozen host, a firewall
dropping packets, a hung middlebox), through a real Daphne process: an API request answers
503 `unavailable` once DB_STATEMENT_TIMEOUT and its margin have passed instead of hanging,
the outage is logged once, and the process recovers by itself. A statement slower than
DB_STATEMENT_TIMEOUT (a lock held too long) is ended by PostgreSQL at the timeout: that
request fails with the reason in the log, no outage, and the next one is served at once.
Migrations and flush (owner mode) run without the limit.

The process has a proxy of its own in front of the database and a short
DB_STATEMENT_TIMEOUT (the default, 30 s, would make a slow test); the cluster's processes
keep the default.
"""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import psycopg
import pytest
import websockets
from django.conf import settings
from django.db import connection

from accounts.tokens import create_api_token
from conversations import services
from conversations.models import Message
from core import rls
from core.db.postgresql.base import DEADLINE_MARGIN_SECONDS
from tests.conftest import database_url_for_subprocesses, require_service, uses_postgres
from tests.support.daphne import database_url, start_daphnes, stop
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.django_db(transaction=True)

STATEMENT_TIMEOUT = 3  # seconds: the process's DB_STATEMENT_TIMEOUT
# When the process gives up on a server that does not answer. Not DB_POOL_TIMEOUT (3 s, a
# pooled connection's check), so that the log tells which one fired.
DEADLINE = STATEMENT_TIMEOUT + DEADLINE_MARGIN_SECONDS
SLACK = 1.5  # seconds a request may take beyond the deadline (the rest of its work)
QUICK = 2.0  # seconds for a 503 once the outage is known (DB_POOL_TIMEOUT is 0.5 then)
LIST = "/api/v1/conversations"


@pytest.fixture(scope="module")
def database_proxy(django_db_setup):
    """A proxy in front of the test database that a test can turn into a black hole."""
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    db = settings.DATABASES["default"]
    proxy = TcpProxy((db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432))).start()
    yield proxy
    proxy.forward()
    proxy.stop()


@pytest.fixture(scope="module")
def daphne_process(tmp_path_factory, database_proxy):
    """One Daphne process (production settings) whose database is behind the proxy: its
    URL and its log."""
    tmp_path = tmp_path_factory.mktemp("deadline")
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
        DB_STATEMENT_TIMEOUT=str(STATEMENT_TIMEOUT),
    )
    try:
        yield f"http://127.0.0.1:{ports[0]}", tmp_path / "daphne-a.log"
    finally:
        stop(procs)


@pytest.fixture
def daphne(daphne_process):
    """The process's URL, and a function returning what it logged during this test."""
    url, log = daphne_process
    start = len(log.read_text())
    return url, lambda: log.read_text()[start:]


async def _timed(coro) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    result = await coro
    return result, time.monotonic() - started


async def _blackhole(base_url: str, proxy: TcpProxy, token: str) -> dict:
    out: dict = {}
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as http:

        def listed():
            return http.get(LIST, headers=headers)

        for _ in range(3):  # every pooled connection just used: handed out without a check
            assert (await listed()).status_code == 200

        proxy.blackhole()  # PostgreSQL takes packets and answers nothing
        out["first"] = await _timed(listed())
        out["then"] = [await _timed(listed()) for _ in range(3)]
        out["healthz"] = await _timed(http.get("/healthz"))  # no token to look up first

        proxy.forward()  # …and answers again
        started = time.monotonic()
        while (await listed()).status_code != 200:
            assert time.monotonic() - started < 15, "did not recover"
            await asyncio.sleep(0.2)
        out["recovered_after"] = time.monotonic() - started
    return out


def test_postgresql_that_never_answers_gets_503_at_the_statement_deadline_then_recovers(
    daphne, database_proxy, alice
):
    token = create_api_token(user=alice, name="api").secret
    url, logged = daphne

    out = asyncio.run(_blackhole(url, database_proxy, token))

    first, took = out["first"]
    print(f"\nblackhole: first 503 after {took:.2f} s (deadline {DEADLINE:g} s)", end="; ")
    assert first.status_code == 503, (first.status_code, took)
    assert first.json()["error"]["code"] == "unavailable"
    assert first.headers["Retry-After"]
    # The statement's deadline ended it: not sooner, and not much later.
    assert DEADLINE - 0.5 <= took < DEADLINE + SLACK, took
    # Once the outage is known, no request waits for the deadline again.
    for answer, took in [*out["then"], out["healthz"]]:
        assert answer.status_code == 503 and took < QUICK, (answer.status_code, took)
    assert out["healthz"][0].json()["db"] == "down"
    print(f"then {max(t for _, t in out['then']):.2f} s at most", end="; ")
    print(f"recovered {out['recovered_after']:.2f} s after the database answered again")
    assert out["recovered_after"] < 10

    log = logged()
    assert "Traceback" not in log, log
    assert log.count("PostgreSQL unreachable") == 1, log
    assert f"PostgreSQL did not answer within {DEADLINE:g} s" in log, log
    assert log.count("PostgreSQL reachable again") == 1, log


async def _next_of(socket, kind: str) -> dict:
    """Return the next frame of `kind`; any other `error` frame meanwhile is returned too."""
    while True:
        frame = json.loads(await asyncio.wait_for(socket.recv(), 30))
        if frame["type"] in (kind, "error"):
            return frame


async def _locked_out(base_url: str, token: str, conversation_id: str) -> dict:
    out: dict = {}
    headers = {"Authorization": f"Bearer {token}"}
    ws_url = f"{base_url.replace('http', 'ws', 1)}/ws/conversations/{conversation_id}/"
    async with (
        httpx.AsyncClient(base_url=base_url, headers=headers, timeout=60) as http,
        websockets.connect(ws_url, additional_headers=headers) as socket,
    ):
        assert (await http.get(LIST)).status_code == 200
        # Another session holds the conversations table: the list's statement waits on it,
        # and so does a send's claim of its conversation.
        with psycopg.connect(database_url_for_subprocesses()) as holder:
            holder.execute("LOCK TABLE conversations_conversation IN ACCESS EXCLUSIVE MODE")
            out["locked"] = await _timed(http.get(LIST))
            await socket.send(json.dumps({"type": "message.send", "content": "hello"}))
            out["socket_error"] = await _next_of(socket, "error")
        out["after"] = await _timed(http.get(LIST))
        await socket.send(json.dumps({"type": "message.send", "content": "hello again"}))
        out["socket_after"] = await _next_of(socket, "generation.started")  # claimed
    return out


def test_a_statement_slower_than_the_timeout_is_ended_by_postgresql_not_waited_for(daphne, alice):
    token = create_api_token(user=alice, name="api").secret
    url, logged = daphne

    conversation = services.create_conversation(user=alice, title="locked out")
    out = asyncio.run(_locked_out(url, token, str(conversation.pk)))

    locked, took = out["locked"]
    print(f"\nlocked out: 503 after {took:.2f} s (statement_timeout {STATEMENT_TIMEOUT} s)")
    assert locked.status_code == 503, (locked.status_code, took)
    assert locked.json()["error"]["code"] == "unavailable"
    assert "too busy" in locked.json()["error"]["message"]
    assert int(locked.headers["Retry-After"]) >= 1
    # PostgreSQL ended it at its timeout, before the app's own deadline.
    assert STATEMENT_TIMEOUT <= took < DEADLINE, took
    # The socket's ask: an error frame to try again, the socket open, nothing stored.
    assert out["socket_error"]["code"] == "unavailable", out["socket_error"]
    assert "too busy" in out["socket_error"]["detail"]
    assert out["socket_after"]["type"] == "generation.started", out["socket_after"]
    assert [m.content for m in Message.objects.filter(conversation=conversation, role="user")] == [
        "hello again"
    ]
    after, took = out["after"]
    assert after.status_code == 200 and took < QUICK, (after.status_code, took)

    log = logged()
    assert "ran out of time" in log and "canceling statement due to statement timeout" in log, log
    assert "PostgreSQL unreachable" not in log, log  # the server answered: not an outage


def _session_limit() -> tuple[str, float | None]:
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        (shown,) = cursor.fetchone()
    return shown, connection.connection.deadline


def test_migrations_and_flush_run_without_the_limit(require_postgres):
    """Owner mode (migrate, flush) has no limit; the app's connections have it again after."""
    limit = f"{settings.DB_STATEMENT_TIMEOUT:g}s"
    assert _session_limit() == (limit, settings.DB_STATEMENT_TIMEOUT + DEADLINE_MARGIN_SECONDS)
    with rls.owner_mode():
        assert _session_limit() == ("0", None)
    assert _session_limit() == (limit, settings.DB_STATEMENT_TIMEOUT + DEADLINE_MARGIN_SECONDS)
