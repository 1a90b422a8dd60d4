"""Row-level security: whose rows the database shows this piece of work (SPEC "Row-level security").

PostgreSQL's policies (core/rls_policies.py) show a query only the rows of the user named by
the transaction-local setting `app.user_id`, for the role `chat_app` the app runs as. This
module owns that setting: the *scope* of the running code lives in a context variable, and
every transaction on a Django connection starts by applying it, with `set_config(...,
true)`, which ends with the transaction. Nothing is ever set for the session, so a pooled
connection carries nothing from one user's work to the next; a query outside Django's
`atomic` (autocommit) is run inside a transaction of its own that starts the same way.

Scopes (one function per decision: `scope_for_request` for HTTP, `as_user` elsewhere):
- `as_user(id)`: that user's rows only. HTTP requests, websocket frames, reply runs.
- nobody (the default): no user's rows at all.
- `bearer(hash)`: the one API token whose secret the caller presented (authentication).
- `share_reader(token)`: the messages of one share link's snapshot (the public page),
  as the read-only role `chat_share`.
- `maintenance()`: every row, as the role `chat_maintenance`: staff in /admin/, retention
  purges, the reply watchdog; migrations run as the owner login (`owner_mode`).
- `narrowed_to(id)`: a search of one user's rows, which reads that user from the scope:
  maintenance work narrows to the user; any other scope stays.

SQLite has no RLS: scopes are kept but nothing is applied; the app's own checks (every
query filters by owner) are the wall there, and the first of two on PostgreSQL.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from django.db import connections

APP_ROLE = "chat_app"
MAINTENANCE_ROLE = "chat_maintenance"
SHARE_ROLE = "chat_share"
# Owns the search functions (core/migrations/0002); nobody logs in as it or switches to it.
SEARCH_ROLE = "chat_search"


@dataclass(frozen=True)
class Scope:
    role: str = APP_ROLE
    user_id: str = ""
    token_hash: str = ""
    share_token: str = ""

    def settings(self) -> tuple[str, str, str, str]:
        return (self.role, self.user_id, self.token_hash, self.share_token)


NOBODY = Scope()
MAINTENANCE = Scope(role=MAINTENANCE_ROLE)

# Where nothing chose a scope. Tests set it to MAINTENANCE for their own fixtures (the code
# under test chooses its own scopes, as in production).
default_scope = NOBODY
_scope: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("rls_scope", default=None)


def current() -> Scope:
    return _scope.get() or default_scope


@contextlib.contextmanager
def using(scope: Scope) -> Iterator[Scope]:
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)


def unscoped_context() -> contextvars.Context:
    """A copy of the current context without its scope: for a process-wide task that a
    user's request happened to start (it must not act as that user)."""
    context = contextvars.copy_context()
    context.run(_scope.set, None)
    return context


def user_scope(user_id: Any) -> Scope:
    """The scope of one user's own rows; nobody's for None/anonymous."""
    return Scope(user_id=str(int(user_id))) if user_id is not None else NOBODY


def as_user(user_id: Any) -> contextlib.AbstractContextManager[Scope]:
    """Run the block with `user_id`'s rows visible (and only theirs)."""
    return using(user_scope(user_id))


def maintenance() -> contextlib.AbstractContextManager[Scope]:
    """Run the block as the maintenance role: every user's rows. Staff and system work only."""
    return using(MAINTENANCE)


def narrowed_to(user_id: Any) -> contextlib.AbstractContextManager[Scope]:
    """Run the block in the current scope, or in `user_id`'s when the current one is
    maintenance: for a search of one user's rows, which takes its user from the scope (the
    search functions of core/migrations/0002), never from an argument. Maintenance sees
    every row already, so narrowing it shows nothing new; any other scope stays as it is
    (a `user_id` that is not the scope's finds nothing)."""
    scope = current()
    if scope.role == MAINTENANCE_ROLE and user_id is not None:
        return as_user(user_id)
    return using(scope)


def bearer(token_hash: str) -> contextlib.AbstractContextManager[Scope]:
    """Run the block seeing the one API token with this hash (nothing else of anyone's)."""
    return using(Scope(token_hash=token_hash))


def share_reader(token: str) -> contextlib.AbstractContextManager[Scope]:
    """Run the block as the share role: the share link `token` and its snapshot's messages."""
    return using(Scope(role=SHARE_ROLE, share_token=token))


def scope_for_user(user: Any, *, staff_area: bool = False) -> Scope:
    """The scope of a request or socket by `user` (staff in their own area see everything)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return NOBODY
    if staff_area and user.is_active and user.is_staff:
        return MAINTENANCE
    return user_scope(user.pk)


def bind_iterator(iterator: Any) -> Any:
    """Iterate `iterator` (sync or async) in the scope current now: a streaming response's
    body runs after the view, and its middleware, have returned."""
    scope = current()
    if hasattr(iterator, "__aiter__"):

        async def agen() -> AsyncIterator[Any]:
            it = aiter(iterator)
            while True:
                with using(scope):
                    try:
                        item = await anext(it)
                    except StopAsyncIteration:
                        return
                yield item

        return agen()

    def gen() -> Iterator[Any]:
        it = iter(iterator)
        while True:
            with using(scope):
                try:
                    item = next(it)
                except StopIteration:
                    return
            yield item

    return gen()


# --- applying the scope to a transaction ------------------------------------------------
_APPLY_SQL = (
    "SELECT set_config('role', %s, true), set_config('app.user_id', %s, true),"
    " set_config('app.token_hash', %s, true), set_config('app.share_token', %s, true)"
)


def _apply(wrapper: Any, scope: Scope) -> None:
    with wrapper.connection.cursor() as cursor:  # psycopg's own: not through the wrappers
        cursor.execute(_APPLY_SQL, scope.settings())
    wrapper.rls_applied = scope


@functools.lru_cache(maxsize=1024)
def _prefix(scope: Scope) -> str | None:
    """`_APPLY_SQL` with the scope's values as literals, to go before a statement."""
    from psycopg import sql

    text = sql.SQL(_APPLY_SQL.replace("%s", "{}")).format(*map(sql.Literal, scope.settings()))
    prefix = text.as_string(None) + "; "
    return None if "%" in prefix else prefix  # never mistaken for a parameter


def _needs_apply(wrapper: Any, scope: Scope) -> bool:
    from psycopg.pq import TransactionStatus

    status = wrapper.connection.info.transaction_status
    if status == TransactionStatus.IDLE:
        return True  # the next statement opens a transaction (or is one, in autocommit)
    return status == TransactionStatus.INTRANS and wrapper.rls_applied != scope


def execute_in_scope(execute: Any, sql: Any, params: Any, many: bool, context: dict) -> Any:
    """Django execute wrapper (installed on every PostgreSQL connection): each statement
    runs in a transaction that starts with the current scope.

    Usually in one round trip: the settings go in front of the statement, in the same
    query string, which PostgreSQL runs as one transaction (or in the open one) — Django's
    client-side-binding cursors send it so. Otherwise (`executemany`, a server-side
    cursor) they are set first, in a transaction of their own around an autocommit statement.
    """
    from psycopg import ClientCursor

    wrapper = context["connection"]
    scope = current()
    if isinstance(sql, str) and sql.startswith("ROLLBACK TO SAVEPOINT"):
        wrapper.rls_applied = None  # it may undo a set_config made since the savepoint
        return execute(sql, params, many, context)
    if wrapper.rls_owner or not _needs_apply(wrapper, scope):
        return execute(sql, params, many, context)
    autocommit = wrapper.get_autocommit()
    cursor = context["cursor"].cursor
    prefix = _prefix(scope)
    if prefix and not many and isinstance(sql, str) and isinstance(cursor, ClientCursor):
        result = execute(prefix + sql, params, many, context)
        cursor.nextset()  # past set_config's row, to the statement's own result
        wrapper.rls_applied = None if autocommit else scope
        return result
    if not autocommit:
        _apply(wrapper, scope)  # psycopg opens the transaction with this statement
        return execute(sql, params, many, context)
    with wrapper.connection.transaction():
        _apply(wrapper, scope)
        try:
            return execute(sql, params, many, context)
        finally:
            wrapper.rls_applied = None


# --- the owner's login, for migrations ---------------------------------------------------
_owner_mode = 0


def in_owner_mode() -> bool:
    return _owner_mode > 0


@contextlib.contextmanager
def owner_mode() -> Iterator[None]:
    """Connect as the login itself (the tables' owner), not the app role: migrations,
    flush, creating the test database. Connections open before are closed first."""
    global _owner_mode
    connections.close_all()
    _owner_mode += 1
    try:
        yield
    finally:
        connections.close_all()
        _owner_mode -= 1
