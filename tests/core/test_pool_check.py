"""A pooled connection is handed out without a round trip, unless the server ended it."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.conf import settings
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def checks(monkeypatch, require_postgres):
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


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _end_idle_sessions() -> list[int]:
    """End every idle session of the test database, as a server restart would."""
    name = settings.DATABASES["default"]["NAME"]
    params = connection.get_connection_params()
    with psycopg.connect(
        host=params.get("host"),
        port=params.get("port"),
        user=params.get("user"),
        dbname=name,
        autocommit=True,
    ) as admin:
        ended = [
            row[0]
            for row in admin.execute(
                "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                " AND state = 'idle' AND backend_type = 'client backend'"
            )
        ]
        for _ in range(50):  # the sessions end (and their sockets close) asynchronously
            row = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [ended]
            ).fetchone()
            if row[0] == 0:
                break
            time.sleep(0.05)
    return ended


def test_a_healthy_idle_connection_is_handed_out_without_asking_the_server(checks):
    _backend_pid()
    connection.close()  # back to the pool: the next query checks one out again
    assert _backend_pid()
    assert checks == []


def test_a_connection_the_server_ended_is_replaced_not_failed_on(checks):
    first = _backend_pid()
    connection.close()
    ended = _end_idle_sessions()
    assert first in ended
    # The next query works, on a new session: the check saw the closed socket and asked.
    second = _backend_pid()
    assert second not in ended
    assert checks and set(checks) <= set(ended)
