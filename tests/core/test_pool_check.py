"""A pooled connection is handed out without a round trip, unless the server ended it."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.db import connection
from psycopg_pool import ConnectionPool

from core.db.postgresql.base import check_pooled
from pools import idle as pg_idle
from pools.idle import check_idle_connection
from tests.agent.conftest import postgres_url  # noqa: F401  (the fixture)


@pytest.fixture
def asked(monkeypatch, require_postgres):
    """Record the sessions asked by psycopg_pool's full check (an empty statement, a round
    trip) while the test runs."""
    calls = []
    execute = psycopg.Connection.execute

    def counted(conn, query, *args, **kwargs):
        if query == "":
            calls.append(conn.info.backend_pid)
        return execute(conn, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", counted)
    return calls


def _pid(conn: psycopg.Connection) -> int:
    return conn.execute("SELECT pg_backend_pid()").fetchone()[0]


@pytest.mark.django_db
def test_djangos_pool_checks_connections_this_way(require_postgres):
    # `pools.idle`'s test, with the answer waited for no longer than the pool's timeout.
    assert connection.pool._check.func is check_pooled


def test_a_healthy_connection_is_not_asked_and_one_the_server_ended_is_replaced(
    asked,
    postgres_url,  # noqa: F811
):
    # A pool of its own: ending sessions of Django's shared pool would disturb other tests.
    pool = ConnectionPool(
        postgres_url, open=False, min_size=1, max_size=1, check=check_idle_connection
    )
    pool.open(wait=True)
    try:
        with pool.connection() as conn:
            first = _pid(conn)  # never handed out before: asked
        with pool.connection() as conn:
            assert _pid(conn) == first  # in use a moment ago, nothing arrived: not asked
        assert asked == [first]
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [first])
        time.sleep(0.3)  # the session ends and its socket closes
        with pool.connection() as conn:
            second = _pid(conn)
    finally:
        pool.close()
    assert second != first
    assert asked == [first, first, second]  # the ended one failed its check; the new one


def test_a_connection_left_unused_too_long_is_asked(asked, postgres_url, monkeypatch):  # noqa: F811
    # A peer that vanished without closing leaves the socket quiet: time decides.
    monkeypatch.setattr(pg_idle, "MAX_QUIET_SECONDS", 0.0)
    pool = ConnectionPool(
        postgres_url, open=False, min_size=1, max_size=1, check=check_idle_connection
    )
    pool.open(wait=True)
    try:
        for _ in range(2):
            with pool.connection() as conn:
                pid = _pid(conn)
            time.sleep(0.01)
    finally:
        pool.close()
    assert asked == [pid, pid]
