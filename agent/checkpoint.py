"""Checkpointers (PostgreSQL or SQLite), one per event loop, and thread helpers."""

from __future__ import annotations

import asyncio
import sqlite3
import weakref
from contextlib import nullcontext
from pathlib import Path
from typing import Any, TypedDict

import aiosqlite
import psycopg
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
)
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg_pool import AsyncConnectionPool

from agent.graph import get_graph, thread_config
from agent.tokens import message_text

POOL_MAX_SIZE = 10
POOL_MIN_SIZE = 1
# PostgreSQL out of reach: a checkpoint read waits this long for a connection (psycopg's
# default is 30 s), a connection attempt this long; a pool that gave up reconnecting
# tries again when asked.
POOL_TIMEOUT_SECONDS = 5.0
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
# loop they hang), so the cache is keyed by the running loop; its lock makes the replies
# that start together on a fresh process wait for one saver instead of opening one each.
_SAVERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, BaseCheckpointSaver]]
_SAVERS = weakref.WeakKeyDictionary()
_OPENING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]
_OPENING = weakref.WeakKeyDictionary()
# Databases whose checkpoint tables this process has set up (any loop): not again.
_SET_UP: set[str] = set()


class PooledPostgresSaver(AsyncPostgresSaver):
    """An AsyncPostgresSaver whose operations run side by side on its pool's connections.

    The stock saver holds one asyncio.Lock around every operation, which a single shared
    connection needs but a pool does not: with it, every checkpoint read and write of the
    process waits for the one before (200 replies starting at once wait seconds).
    """

    def __init__(self, pool: AsyncConnectionPool) -> None:
        super().__init__(pool)  # type: ignore[arg-type]
        self.lock = nullcontext()  # type: ignore[assignment]


class ThreadMessage(TypedDict):
    id: str
    role: str
    content: str


class ThreadMemory(TypedDict):
    thread_id: str
    summaries: list[str]
    messages: list[ThreadMessage]
    message_ids: list[str]
    calibration: float
    ledger: dict[str, Any]


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
        pool = AsyncConnectionPool(
            database_url,
            open=False,
            min_size=POOL_MIN_SIZE,
            max_size=POOL_MAX_SIZE,
            timeout=POOL_TIMEOUT_SECONDS,
            reconnect_timeout=RECONNECT_TIMEOUT_SECONDS,
            check=AsyncConnectionPool.check_connection,
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
        saver = AsyncSqliteSaver(connection)
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
    however many callers ask at the same moment)."""
    loop = asyncio.get_running_loop()
    savers = _SAVERS.setdefault(loop, {})
    saver = savers.get(database_url)
    if saver is not None:
        return saver
    async with _OPENING.setdefault(loop, asyncio.Lock()):
        saver = savers.get(database_url)
        if saver is None:
            saver = savers[database_url] = await open_checkpointer(database_url)
    return saver


async def close_checkpointers() -> None:
    """Close and forget this event loop's cached savers (shutdown, tests)."""
    savers = _SAVERS.pop(asyncio.get_running_loop(), {})
    for saver in savers.values():
        await close_checkpointer(saver)


def _role(message: BaseMessage) -> str:
    """Return the chat role of a stored message."""
    return {"human": "user", "ai": "assistant"}.get(message.type, message.type)


async def read_thread(
    saver: BaseCheckpointSaver, thread_id: str, checkpoint_id: str | None = None
) -> ThreadMemory | None:
    """Return what the agent remembers of a thread, at its latest checkpoint or at
    `checkpoint_id` (a branch); None when it has no state."""
    config = thread_config(thread_id, checkpoint_id=checkpoint_id)
    snapshot = await get_graph(saver).aget_state(config)
    values = snapshot.values or {}
    if not values:
        return None
    messages: list[BaseMessage] = values.get("messages", [])
    return {
        "thread_id": thread_id,
        "summaries": list(values.get("summaries", [])),
        "messages": [
            {"id": m.id or "", "role": _role(m), "content": message_text(m)} for m in messages
        ],
        "message_ids": [m.id for m in messages if m.id],
        "calibration": float(values.get("calibration", 1.0)),
        "ledger": dict(values.get("ledger", {})),
    }


async def record_exchange(
    saver: BaseCheckpointSaver,
    thread_id: str,
    *,
    user_message_id: str,
    user_text: str,
    reply_id: str,
    reply_text: str,
    finish_reason: str,
    base_checkpoint_id: str | None = None,
    replaces: str | None = None,
    seed: list[BaseMessage] | None = None,
) -> str:
    """Put a user message and its (partial) reply into a thread, once (ids deduplicate).

    A turn saves its checkpoint when it ends; a process that died mid-turn saved
    nothing, so whoever finishes that turn records what the user said and saw. It goes
    on top of `base_checkpoint_id` (the branch the turn ran on; None: the latest), after
    `seed` (a branch the thread never held); `replaces` is a cut-off reply this one
    continued. Returns the new checkpoint's id.
    """
    messages: list[BaseMessage] = [*(seed or [])]
    messages.append(HumanMessage(id=user_message_id, content=user_text))
    config = thread_config(thread_id, checkpoint_id=base_checkpoint_id)
    graph = get_graph(saver)
    if replaces:
        held = (await graph.aget_state(config)).values.get("messages", [])
        if any(m.id == replaces for m in [*held, *messages]):
            messages.append(RemoveMessage(id=replaces))
    if reply_text:
        metadata = {"finish_reason": finish_reason}
        messages.append(AIMessage(id=reply_id, content=reply_text, response_metadata=metadata))
    written = await graph.aupdate_state(config, {"messages": messages}, as_node="agent")
    return str(written["configurable"]["checkpoint_id"])


async def delete_thread(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """Delete every checkpoint of a thread."""
    await saver.adelete_thread(thread_id)


async def _oldest_holding(
    saver: BaseCheckpointSaver, thread_id: str, message_id: str
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Return (config, values) of the oldest checkpoint holding `message_id`, if any.

    That is where the message was added: its summaries fold only older messages, so
    nothing in it was said later. Checkpoints are listed newest first, every branch.
    """
    found: tuple[dict[str, Any], dict[str, Any]] | None = None
    async for snapshot in get_graph(saver).aget_state_history(thread_config(thread_id)):
        messages = (snapshot.values or {}).get("messages", [])
        if any(m.id == message_id for m in messages):
            found = (snapshot.config, snapshot.values)
    return found


def _cut_after(messages: list[BaseMessage], message_id: str) -> list[BaseMessage]:
    """Return the messages after `message_id` (the ones a branch point leaves out)."""
    ids = [m.id for m in messages]
    return messages[ids.index(message_id) + 1 :]


async def branch_point(saver: BaseCheckpointSaver, thread_id: str, message_id: str) -> str:
    """Return a checkpoint whose memory ends right after `message_id` (written if needed).

    For a message whose own checkpoint is not known (a user message, a conversation
    from before branches). Raises LookupError when the thread never held the message.
    """
    latest = await get_graph(saver).aget_state(thread_config(thread_id))
    held = (latest.values or {}).get("messages", [])
    if held and held[-1].id == message_id:  # a conversation from before branches
        return str(latest.config["configurable"]["checkpoint_id"])
    found = await _oldest_holding(saver, thread_id, message_id)
    if found is None:
        raise LookupError(f"message {message_id} not found in thread {thread_id}")
    config, values = found
    later = _cut_after(list(values.get("messages", [])), message_id)
    if not later:
        return str(config["configurable"]["checkpoint_id"])
    removals = [RemoveMessage(id=m.id) for m in later if m.id]
    written = await get_graph(saver).aupdate_state(config, {"messages": removals}, as_node="agent")
    return str(written["configurable"]["checkpoint_id"])


async def copy_thread(
    saver: BaseCheckpointSaver,
    source_thread_id: str,
    target_thread_id: str,
    up_to_message_id: str,
    checkpoint_id: str | None = None,
) -> ThreadMemory:
    """Start `target` with the memory `source` had right after `up_to_message_id`.

    From `checkpoint_id` when the message's own checkpoint is known, else from the oldest
    checkpoint holding the message, cut right after it. Replaces any target state.
    Raises LookupError when the source thread never held that message.
    """
    graph = get_graph(saver)
    chosen: dict[str, Any] | None = None
    if checkpoint_id:
        snapshot = await graph.aget_state(
            thread_config(source_thread_id, checkpoint_id=checkpoint_id)
        )
        if snapshot.values and any(
            m.id == up_to_message_id for m in snapshot.values.get("messages", [])
        ):
            chosen = snapshot.values
    if chosen is None:
        found = await _oldest_holding(saver, source_thread_id, up_to_message_id)
        if found is None:
            raise LookupError(f"message {up_to_message_id} not found in thread {source_thread_id}")
        chosen = found[1]
    kept = list(chosen["messages"])
    kept = kept[: len(kept) - len(_cut_after(kept, up_to_message_id))]
    await saver.adelete_thread(target_thread_id)
    values = {
        "messages": kept,
        "summaries": list(chosen.get("summaries", [])),
        "calibration": chosen.get("calibration", 1.0),
    }
    await graph.aupdate_state(thread_config(target_thread_id), values, as_node="agent")
    memory = await read_thread(saver, target_thread_id)
    assert memory is not None
    return memory
