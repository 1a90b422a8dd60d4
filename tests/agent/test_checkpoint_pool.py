"""The checkpointer's pool queues callers while it is busy and fails fast while broken."""

from __future__ import annotations

import asyncio
import time

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from agent.checkpoint import QueueingPool
from pools.idle import acheck_idle_connection

pytestmark = pytest.mark.postgres

HOLD = 0.15  # each caller keeps the one connection this long
TIMEOUT = 0.2  # the pool's own wait: the fourth caller in line waits ~0.45 s


async def _burst(pool: AsyncConnectionPool, callers: int) -> list[str]:
    async def use() -> str:
        try:
            async with pool.connection() as conn:
                await conn.execute("SELECT 1")
                await asyncio.sleep(HOLD)
            return "served"
        except PoolTimeout:
            return "timed out"

    await pool.open(wait=True)
    try:
        return list(await asyncio.gather(*(use() for _ in range(callers))))
    finally:
        await pool.close()


async def test_callers_past_the_pools_size_wait_their_turn_instead_of_failing(postgres_url):
    plain = AsyncConnectionPool(postgres_url, open=False, min_size=1, max_size=1, timeout=TIMEOUT)
    queueing = QueueingPool(postgres_url, open=False, min_size=1, max_size=1, timeout=TIMEOUT)

    dropped = await _burst(plain, 5)
    served = await _burst(queueing, 5)

    assert dropped.count("timed out") >= 2  # what a burst did to replies before
    assert served == ["served"] * 5
    assert queueing.handed_out == 5


async def test_a_pool_that_hands_out_nothing_still_fails_after_its_timeout(postgres_url):
    pool = QueueingPool(postgres_url, open=False, min_size=1, max_size=1, timeout=TIMEOUT)
    await pool.open(wait=True)
    try:
        held = await pool.getconn()  # stuck: nobody gives it back while the caller waits
        asked = time.monotonic()
        with pytest.raises(PoolTimeout):
            await pool.getconn()
        waited = time.monotonic() - asked
        await pool.putconn(held)
    finally:
        await pool.close()
    assert TIMEOUT <= waited < TIMEOUT + 1.0


async def test_a_connection_is_asked_only_when_the_server_ended_it(postgres_url, monkeypatch):
    """The checkpoints' pool: no round trip to hand out a connection in steady use; a
    session the server ended is found and replaced, not failed on."""
    asked: list[int] = []
    execute = psycopg.AsyncConnection.execute

    async def counted(conn, query, *args, **kwargs):
        if query == "":  # psycopg_pool's full check
            asked.append(conn.info.backend_pid)
        return await execute(conn, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.AsyncConnection, "execute", counted)
    pool = AsyncConnectionPool(
        postgres_url, open=False, min_size=1, max_size=1, check=acheck_idle_connection
    )
    await pool.open(wait=True)
    try:
        async with pool.connection() as conn:
            first = (await (await conn.execute("SELECT pg_backend_pid()")).fetchone())[0]
        async with pool.connection() as conn:
            assert (await (await conn.execute("SELECT pg_backend_pid()")).fetchone())[0] == first
        assert asked == [first]  # its first time out only
        async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", [first])
        await asyncio.sleep(0.3)  # the session ends and its socket closes
        async with pool.connection() as conn:
            second = (await (await conn.execute("SELECT pg_backend_pid()")).fetchone())[0]
    finally:
        await pool.close()
    assert second != first
    assert asked == [first, first, second]  # the ended one failed its check; the new one
