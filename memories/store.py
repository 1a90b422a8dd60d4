"""LangGraph's store (PostgresStore / SqliteStore) on Django's own database connection.

The store's queries run on the connection Django holds for this thread, inside Django's
transactions: what a request or a reply run sets on its connection (the row-level
security user, a test's transaction) holds for the store too, and no second pool is
opened per event loop. Its tables are made by this app's migration (the store's own
`setup()`), so the app never needs to create tables at run time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from django.db import connection, transaction
from langgraph.store.base import BaseStore, Op, PutOp, Result
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore
from psycopg.rows import dict_row


class DjangoPostgresStore(PostgresStore):
    """A PostgresStore on Django's own cursors (text results: they bind client-side, which
    cannot return binary; no pipeline mode). Each statement runs in the row-level security
    scope as any Django query does, in one round trip; a batch that writes is one Django
    transaction. A read (a turn's memory recall) was BEGIN, the scope, the query and
    COMMIT: four round trips, now one."""

    atomic = True  # setup() runs CREATE INDEX CONCURRENTLY, which refuses a transaction

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        writes = self.atomic and any(isinstance(op, PutOp) for op in ops)
        with transaction.atomic() if writes else nullcontext():
            return super().batch(ops)

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
        with connection.cursor() as cursor:
            cursor.cursor.row_factory = dict_row
            yield cursor


class DjangoSqliteStore(SqliteStore):
    """A SqliteStore inside Django's transaction (it would BEGIN/COMMIT on its own)."""

    @contextmanager
    def _cursor(self, *, transaction: bool = True) -> Iterator[Any]:
        with _atomic():
            cursor = self.conn.cursor()
            try:
                yield cursor
            finally:
                cursor.close()


def _atomic() -> Any:
    return transaction.atomic()


def get_store() -> BaseStore:
    """Return a store on this thread's Django connection (cheap; make one per operation)."""
    connection.ensure_connection()
    raw = connection.connection
    if connection.vendor == "postgresql":
        return DjangoPostgresStore(raw)
    store = DjangoSqliteStore(raw)
    store.is_setup = True  # the migration made the tables
    return store


def setup_store() -> None:
    """Create or upgrade the store's tables (from a migration, outside a transaction)."""
    connection.ensure_connection()
    raw = connection.connection
    if connection.vendor == "postgresql":
        store = DjangoPostgresStore(raw)
        store.atomic = False
        store.setup()
    else:
        SqliteStore(raw).setup()
