"""Checkpointers (PostgreSQL or SQLite), one per event loop (threads: agent/threads.py)."""

from __future__ import annotations

import asyncio
import sqlite3
import weakref
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from time import monotonic
from typing import Any

import aiosqlite
import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from pools.idle import acheck_idle_connection

POOL_MAX_SIZE = 10
POOL_MIN_SIZE = 1
# PostgreSQL out of reach: a checkpoint read waits this long for a connection (psycopg's
# default is 30 s), a connection attempt this long; a pool that gave up reconnecting
# tries again when asked.
POOL_TIMEOUT_SECONDS = 5.0
# A busy pool (it handed connections to others meanwhile) is waited for again, in turn,
# up to this long in all: replies past the pool's size queue instead of failing.
POOL_QUEUE_SECONDS = 120.0
CONNECT_TIMEOUT_SECONDS = 3
RECONNECT_TIMEOUT_SECONDS = 5.0
# Its connections, as pg_stat_activity names them.
APPLICATION_NAME = "chat-checkpoints"
# Serializes setup() across processes: two running it at once on a new database both
# insert the same migration versions (UniqueViolation on checkpoint_migrations).
SETUP_LOCK_KEY = 0x63686B70  # "chkp"
SETUP_LOCK_POLL_SECONDS = 0.05
# A checkpoint id no thread holds: a run from it starts with empty memory (a branch whose
# first message is new, e.g. an edited first message). LangGraph loads no checkpoint for
# it and starts fresh, on the same thread.
EMPTY_CHECKPOINT_ID = "00000000-0000-0000-0000-000000000000"

# A saver and its connections belong to the loop that opened them (used from another
# loop they hang), so the cache is keyed by the running loop. The replies that start
# together on a fresh process share one opening (a task) instead of opening one each,
# and share its failure too: taking turns, each waiting out its own POOL_TIMEOUT_SECONDS
# with PostgreSQL full or away, the eighth reply of a burst waited 40 s.
_SAVERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, BaseCheckpointSaver]]
_SAVERS = weakref.WeakKeyDictionary()
_OPENING: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[str, asyncio.Task[BaseCheckpointSaver]]
]
_OPENING = weakref.WeakKeyDictionary()
# Databases whose checkpoint tables this process has set up (any loop): not again.
_SET_UP: set[str] = set()


class PrunableSqliteSaver(AsyncSqliteSaver):
    """An AsyncSqliteSaver that prunes a thread to its latest checkpoint, as the
    PostgreSQL saver does (the SQLite one has no `aprune`)."""

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Keep each thread's latest checkpoint per namespace and its writes, or ("delete")
        nothing of the threads."""
        if strategy == "delete":
            for thread_id in thread_ids:
                await self.adelete_thread(thread_id)
            return
        async with self.lock, self.conn.cursor() as cur:
            for thread_id in thread_ids:
                await cur.execute(_SQLITE_PRUNE_CHECKPOINTS, (str(thread_id),) * 2)
                await cur.execute(_SQLITE_PRUNE_WRITES, (str(thread_id),) * 2)
            await self.conn.commit()


_SQLITE_PRUNE_CHECKPOINTS = """
DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id NOT IN (
    SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? GROUP BY checkpoint_ns
)"""
_SQLITE_PRUNE_WRITES = """
DELETE FROM writes WHERE thread_id = ? AND checkpoint_id NOT IN (
    SELECT checkpoint_id FROM checkpoints WHERE thread_id = ?
)"""


class _Sweeper:
    """A pool's connection check that, on finding one connection dead, checks every idle
    one at once. After an outage all of them are dead, and psycopg_pool waits 1, 2, 4 s…
    between failed checks: ten dead connections outlast POOL_TIMEOUT_SECONDS, and the
    first reply after PostgreSQL came back would fail."""

    def __init__(self) -> None:
        self.pool: AsyncConnectionPool | None = None
        self._sweeping: asyncio.Task[None] | None = None

    async def check(self, conn: psycopg.AsyncConnection) -> None:
        try:
            await acheck_idle_connection(conn)  # a round trip only if the server spoke
        except Exception:
            if self.pool is not None and (self._sweeping is None or self._sweeping.done()):
                self._sweeping = asyncio.get_running_loop().create_task(self.pool.check())
            raise


class QueueingPool(AsyncConnectionPool):
    """A pool whose callers wait while it is busy and fail fast while it is broken.

    psycopg_pool gives up on a caller after `timeout` whatever the reason. Under a burst
    (400 replies starting on 10 connections) that drops replies a moment's patience would
    serve; with PostgreSQL gone, waiting longer only hides the outage. So a caller whose
    wait timed out waits again if the pool handed out connections meanwhile (busy), for
    POOL_QUEUE_SECONDS at most, and fails if it handed out none (broken).
    """

    handed_out = 0  # connections handed out so far (the pool's progress)

    async def getconn(self, timeout: float | None = None) -> psycopg.AsyncConnection:  # noqa: ASYNC109 (psycopg_pool's signature)
        give_up = monotonic() + POOL_QUEUE_SECONDS
        while True:
            progress = self.handed_out
            try:
                conn = await super().getconn(timeout)
            except PoolTimeout:
                if self.handed_out == progress or monotonic() > give_up:
                    raise
                continue
            self.handed_out += 1
            return conn


# The root namespace's latest checkpoint is kept; older ones go with their writes, and so
# do the blobs they used that the kept one does not. The kept one no longer has a parent.
_KEEP_LATEST_SQL = """
WITH head AS (
    SELECT checkpoint_id AS id, checkpoint -> 'channel_versions' AS versions FROM checkpoints
    WHERE thread_id = %(thread)s AND checkpoint_ns = ''
    ORDER BY checkpoint_id DESC LIMIT 1
), gone AS (
    DELETE FROM checkpoints c USING head
    WHERE c.thread_id = %(thread)s AND c.checkpoint_ns = '' AND c.checkpoint_id < head.id
    RETURNING c.checkpoint -> 'channel_versions' AS versions
), freed AS (
    SELECT DISTINCT v.key AS channel, v.value AS version
    FROM gone CROSS JOIN LATERAL jsonb_each_text(gone.versions) AS v
    EXCEPT
    SELECT v.key, v.value FROM head CROSS JOIN LATERAL jsonb_each_text(head.versions) AS v
), blobs AS (
    DELETE FROM checkpoint_blobs b USING freed
    WHERE b.thread_id = %(thread)s AND b.checkpoint_ns = ''
    AND b.channel = freed.channel AND b.version = freed.version
), writes AS (
    DELETE FROM checkpoint_writes w USING head
    WHERE w.thread_id = %(thread)s AND w.checkpoint_ns = '' AND w.checkpoint_id < head.id
)
UPDATE checkpoints c SET parent_checkpoint_id = NULL FROM head
WHERE c.thread_id = %(thread)s AND c.checkpoint_ns = '' AND c.checkpoint_id = head.id
AND c.parent_checkpoint_id IS NOT NULL
"""


class PooledPostgresSaver(AsyncPostgresSaver):
    """An AsyncPostgresSaver whose operations run side by side on its pool's connections.

    The stock saver holds one asyncio.Lock around every operation, which a single shared
    connection needs but a pool does not: with it, every checkpoint read and write of the
    process waits for the one before (200 replies starting at once wait seconds).
    """

    def __init__(self, pool: AsyncConnectionPool) -> None:
        super().__init__(pool)  # type: ignore[arg-type]
        self.lock = nullcontext()  # type: ignore[assignment]

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Keep each thread's latest checkpoint and what it references, in one statement
        per thread; "delete": nothing of the threads (the stock saver's way).

        Every turn prunes its thread, and the stock `keep_latest` took two pooled
        connections and ~ten round trips per turn (8% of the process's CPU under a
        burst of replies): it also handles subgraph namespaces, `Send` parents and
        delta channels, which this app's graph (agent/graph.py) never checkpoints. Only
        the root namespace is pruned here; a statement sees one snapshot, so a checkpoint
        saved meanwhile is neither seen nor deleted, nor are the blobs it writes.
        """
        if isinstance(thread_ids, str) or strategy != "keep_latest":
            await super().aprune(thread_ids, strategy=strategy)  # it refuses a bare str
            return
        for thread_id in thread_ids:
            async with self.conn.connection() as conn:  # type: ignore[union-attr]
                await conn.execute(_KEEP_LATEST_SQL, {"thread": str(thread_id)})


def is_checkpoint_error(error: BaseException | None) -> bool:
    """Say whether `error` came from the checkpoint database (PostgreSQL or SQLite), or
    from what it was raised from."""
    while error is not None:
        if isinstance(error, psycopg.Error | sqlite3.Error):
            return True
        error = error.__cause__
    return False


def is_postgres_url(url: str) -> bool:
    """Say whether `url` names a PostgreSQL database."""
    return url.startswith(("postgres://", "postgresql://"))


def sqlite_path(url: str) -> str:
    """Return the file path of a sqlite URL (or a plain path)."""
    if url.startswith("sqlite:///"):
        return url[len("sqlite:///") :] or ":memory:"
    if url.startswith("sqlite://"):
        return url[len("sqlite://") :] or ":memory:"
    return url


async def open_checkpointer(database_url: str) -> BaseCheckpointSaver:
    """Open and set up a saver for `database_url` (call inside the loop that will use it).

    Its own pool (up to POOL_MAX_SIZE connections) on PostgreSQL: callers keep one per
    process and loop (`get_checkpointer`) or close it when done.
    """
    if is_postgres_url(database_url):
        sweeper = _Sweeper()
        pool = sweeper.pool = QueueingPool(
            database_url,
            open=False,
            min_size=POOL_MIN_SIZE,
            max_size=POOL_MAX_SIZE,
            timeout=POOL_TIMEOUT_SECONDS,
            reconnect_timeout=RECONNECT_TIMEOUT_SECONDS,
            check=sweeper.check,
            kwargs={
                "autocommit": True,
                "prepare_threshold": 0,
                "connect_timeout": CONNECT_TIMEOUT_SECONDS,
                "application_name": APPLICATION_NAME,
            },
        )
        await pool.open()
        saver: BaseCheckpointSaver = PooledPostgresSaver(pool)
    else:
        path = sqlite_path(database_url)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        connection = aiosqlite.connect(path)
        # A daemon thread: a server stopping without closing its saver (ASGI has no
        # shutdown hook here) must still exit instead of waiting on this thread.
        connection._thread.daemon = True
        connection = await connection
        await connection.execute("PRAGMA journal_mode=WAL")
        saver = PrunableSqliteSaver(connection)
    try:
        await _set_up(saver, database_url)
    except BaseException:
        await close_checkpointer(saver)  # a failed open leaves no pool behind
        raise
    return saver


async def _set_up(saver: BaseCheckpointSaver, database_url: str) -> None:
    """Create or migrate the checkpoint tables: on PostgreSQL once per process and
    database, under an advisory lock, so that processes starting together take turns
    (SQLite's setup is local and cheap, and a `:memory:` database is new every time)."""
    if not isinstance(saver, AsyncPostgresSaver):
        await saver.setup()  # type: ignore[attr-defined]
        return
    if database_url in _SET_UP:
        return
    async with saver.conn.connection() as conn:  # type: ignore[union-attr]
        # Polled, not waited for in a statement: setup() runs CREATE INDEX CONCURRENTLY,
        # which waits for every running statement, a waiting pg_advisory_lock included
        # (the two processes would wait for each other forever).
        while not await _try_lock(conn):  # noqa: ASYNC110 (another process holds it)
            await asyncio.sleep(SETUP_LOCK_POLL_SECONDS)
        try:
            await saver.setup()
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK_KEY,))
    _SET_UP.add(database_url)


async def _try_lock(conn: Any) -> bool:
    cursor = await conn.execute("SELECT pg_try_advisory_lock(%s)", (SETUP_LOCK_KEY,))
    row = await cursor.fetchone()
    return bool(row and row[0])


def forget_setup() -> None:
    """Forget which databases were set up (tests: as a process that just started)."""
    _SET_UP.clear()


async def close_checkpointer(saver: BaseCheckpointSaver) -> None:
    """Close the saver's pool or connection."""
    connection = getattr(saver, "conn", None)
    if connection is not None:
        await connection.close()


async def get_checkpointer(database_url: str) -> BaseCheckpointSaver:
    """Return this event loop's saver for `database_url`, opening it on first use (once,
    however many callers ask at the same moment; if that opening fails, it fails for all
    of them, and the next caller tries again)."""
    loop = asyncio.get_running_loop()
    saver = _SAVERS.setdefault(loop, {}).get(database_url)
    if saver is not None:
        return saver
    opening = _OPENING.setdefault(loop, {})
    task = opening.get(database_url)
    if task is None:
        task = opening[database_url] = loop.create_task(_open_for(loop, database_url))
        task.add_done_callback(_retrieve)  # its failure is the callers' to report
    return await asyncio.shield(task)  # a caller cancelled leaves it to the others


async def _open_for(loop: asyncio.AbstractEventLoop, database_url: str) -> BaseCheckpointSaver:
    try:
        saver = _SAVERS.setdefault(loop, {})[database_url] = await open_checkpointer(database_url)
    finally:
        _OPENING.get(loop, {}).pop(database_url, None)
    return saver


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def close_checkpointers() -> None:
    """Close and forget this event loop's cached savers (shutdown, tests)."""
    savers = _SAVERS.pop(asyncio.get_running_loop(), {})
    for saver in savers.values():
        await close_checkpointer(saver)


# Threads holding more than one checkpoint, in id order after a given one (a pruning pass
# resumes where it stopped), and the bytes all threads' checkpoints take.
_PG_UNPRUNED = """SELECT thread_id FROM checkpoints WHERE thread_id > %s
GROUP BY thread_id HAVING count(*) > 1 ORDER BY thread_id LIMIT %s"""
_SQLITE_UNPRUNED = """SELECT thread_id FROM checkpoints WHERE thread_id > ?
GROUP BY thread_id HAVING count(*) > 1 ORDER BY thread_id LIMIT ?"""
_PG_BYTES = """SELECT
 (SELECT coalesce(sum(octet_length(checkpoint::text) + octet_length(metadata::text)), 0)
    FROM checkpoints)
 + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs)
 + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes)"""
_SQLITE_BYTES = """SELECT
 (SELECT coalesce(sum(length(checkpoint) + length(metadata)), 0) FROM checkpoints)
 + (SELECT coalesce(sum(length(value)), 0) FROM writes)"""
_THREADS = "SELECT DISTINCT thread_id FROM checkpoints"


async def _fetch(saver: BaseCheckpointSaver, postgres: str, sqlite: str, *params: Any) -> list:
    """Run one read on the saver's own connection(s) and return its rows."""
    if isinstance(saver, AsyncPostgresSaver):
        async with saver.conn.connection() as conn:  # type: ignore[union-attr]
            cursor = await conn.execute(postgres, params)
            return list(await cursor.fetchall())
    async with saver.conn.execute(sqlite, params) as cursor:  # type: ignore[attr-defined]
        return list(await cursor.fetchall())


async def unpruned_threads(
    saver: BaseCheckpointSaver, *, after: str = "", limit: int = 100
) -> list[str]:
    """Return up to `limit` ids of threads holding more than one checkpoint, after `after`."""
    rows = await _fetch(saver, _PG_UNPRUNED, _SQLITE_UNPRUNED, after, limit)
    return [str(row[0]) for row in rows]


async def all_threads(saver: BaseCheckpointSaver) -> list[str]:
    """Return the id of every thread that holds a checkpoint."""
    return [str(row[0]) for row in await _fetch(saver, _THREADS, _THREADS)]


async def stored_bytes(saver: BaseCheckpointSaver) -> int:
    """Return the bytes every thread's checkpoints, blobs and writes hold (data only)."""
    rows = await _fetch(saver, _PG_BYTES, _SQLITE_BYTES)
    return int(rows[0][0] or 0)
