"""Check a pooled PostgreSQL connection as it is handed out, without a round trip unless
something arrived on it while it sat idle. No Django here: the agent's checkpoint pool
uses it too.

psycopg_pool's own check sends an empty statement at every checkout: a round trip per
database call (~6 per reply on Django's pool, ~4 on the checkpoints'). A server that
restarts or ends a session sends its reason and closes the socket; both make the idle
socket readable, and then the full check runs and fails, so the pool replaces the
connection. Anything else readable (a notice) passes the full check. A peer that vanished
without closing (a host crash, an address moved to another host) leaves the socket quiet,
so a connection not handed out for MAX_QUIET_SECONDS (or never) is asked anyway: only one
in steady use skips the round trip.
"""

from __future__ import annotations

import select
import time
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool

MAX_QUIET_SECONDS = 10.0


def needs_full_check(connection: Any) -> bool:
    """Say whether the server may have ended this connection: it sent something while the
    connection sat idle, or the connection sat unused too long to tell."""
    if connection.closed:
        raise psycopg.OperationalError("the connection is closed")
    now = time.monotonic()
    last, connection.chat_handed_out_at = getattr(connection, "chat_handed_out_at", None), now
    if last is None or now - last > MAX_QUIET_SECONDS:
        return True
    poll = select.poll()  # not select(): a busy server's descriptors pass 1024
    poll.register(connection.fileno(), select.POLLIN)
    return bool(poll.poll(0))


def check_idle_connection(connection: psycopg.Connection) -> None:
    """A `check` for psycopg_pool's ConnectionPool."""
    if needs_full_check(connection):
        ConnectionPool.check_connection(connection)


async def acheck_idle_connection(connection: psycopg.AsyncConnection) -> None:
    """A `check` for psycopg_pool's AsyncConnectionPool."""
    if needs_full_check(connection):
        await AsyncConnectionPool.check_connection(connection)
