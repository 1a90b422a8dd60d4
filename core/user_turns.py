"""One user's check-then-write, one request at a time.

A per-user rule read before a write holds only if two requests of the same user cannot
both read before either writes. Such rules are a cap (prompts, shares, memories, saved
questions), "one export or import of yours at a time", "the same memory once", and the
month's token budget. Each service that enforces one first calls `hold_user` inside its
transaction. That locks the user's row until the transaction ends, so the same user's
requests take turns across processes, and other users never wait.

Locking the rows the rule reads is not enough. When there are none, nothing is locked:
twenty first exports sent at once all passed a `select_for_update()` of the running
ones. On SQLite every transaction is already `IMMEDIATE` (chatsite/backends.py), so
writers take turns there anyway.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection


@cache
def _lock_sql(select_for_update: bool) -> str:
    table = connection.ops.quote_name(get_user_model()._meta.db_table)
    return f"SELECT id FROM {table} WHERE id = %s" + (" FOR UPDATE" if select_for_update else "")


def hold_user(user_id: Any) -> None:
    """Lock the user's row until the caller's transaction ends (call inside one)."""
    if not connection.in_atomic_block:
        raise RuntimeError("hold_user outside a transaction would hold nothing")
    with connection.cursor() as cursor:  # written out: one of a claim's statements
        cursor.execute(_lock_sql(connection.features.has_select_for_update), [user_id])
