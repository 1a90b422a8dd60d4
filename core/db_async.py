"""Database calls from the event loop: a pool of threads on PostgreSQL, not one thread.

`database_sync_to_async` runs every call of a server process on ONE thread (asgiref's
thread-sensitive default), so 200 replies starting at once queue behind each other's
queries. PostgreSQL serves several connections at once (Django's pool), so where asgiref
would pick that one process-wide thread, these calls use a small pool of threads. Where
asgiref has a better thread (a sync caller above, as with the test client, or a request's
thread-sensitive context) and on SQLite (one writer), they behave exactly as before.

Naming (one rule): the async twin of a database function `f` is `af` = `db_async(f)`,
defined next to `f` when others await it (`memories.services.arecall_memories`), or
`_af` at the top of the one module that does (`_aclaim_reply` in the orchestrator).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from functools import wraps
from typing import ParamSpec, TypeVar

from asgiref.sync import AsyncToSync, SyncToAsync, sync_to_async
from channels.db import database_sync_to_async
from django.db import connections

P = ParamSpec("P")
R = TypeVar("R")

DB_THREADS = 8  # below DB_POOL_SIZE (20): each call holds one pooled connection
# Threads start on first use.
_executor = ThreadPoolExecutor(max_workers=DB_THREADS, thread_name_prefix="db")


def _use_pool() -> bool:
    """Say whether asgiref would run a thread-sensitive call on its one global thread."""
    connection = connections["default"]
    if connection.vendor == "sqlite" or connection.in_atomic_block:
        return False  # one writer; or a transaction here (a test's) other threads cannot see
    if getattr(AsyncToSync.executors, "current", None) is not None:
        return False
    if SyncToAsync.thread_sensitive_context.get(None) is not None:
        return False
    return asyncio.get_running_loop() not in AsyncToSync.loop_thread_executors


def db_async(func: Callable[P, R], *, close_serial: bool = True) -> Callable[P, Awaitable[R]]:
    """Wrap a sync database function for async callers (pooled calls close their connection).

    `close_serial=False` keeps a plain `sync_to_async` on the one-thread path, for
    functions that never closed connections there (a test's transaction lives on it).
    """
    serial = database_sync_to_async(func) if close_serial else sync_to_async(func)
    pooled = database_sync_to_async(func, thread_sensitive=False, executor=_executor)

    @wraps(func)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return await (pooled if _use_pool() else serial)(*args, **kwargs)

    return call
