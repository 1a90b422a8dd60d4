"""PostgreSQL, connected as the app's role, with every transaction in the current RLS scope.

Django's own backend plus five things (core/rls.py explains the scopes):
- each connection runs as `chat_app` (`SET ROLE`, kept for the connection's life: it is the
  same for every user), except in `rls.owner_mode()` (migrations, flush, the test database),
  which runs as the login, the tables' owner. A pooled connection is switched when it is
  checked out in the other mode.
- every statement goes through `rls.execute_in_scope`, which starts its transaction with
  the scope's transaction-local settings.
- creating and destroying the test database happen in owner mode.
- connecting reports PostgreSQL's outages and recoveries, and fails fast during one.
- no statement runs longer than settings.DB_STATEMENT_TIMEOUT: PostgreSQL ends it
  (`statement_timeout`), and a server that does not answer is given up a moment later
  (deadline.py), except in owner mode (migrations may take their time).
"""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.backends.postgresql import base, creation
from psycopg_pool import ConnectionPool

from core import rls
from core.outages import DATABASE, outage_of
from pools.idle import needs_full_check

from .deadline import DeadlineConnection

# Seconds a connection is waited for while PostgreSQL is known to be down.
OUTAGE_POOL_TIMEOUT = 0.5
# Seconds past DB_STATEMENT_TIMEOUT before the app gives up on the server itself: a slow
# statement is ended by PostgreSQL first (a clear error, and the connection stays usable).
DEADLINE_MARGIN_SECONDS = 1.0


def statement_deadline() -> float | None:
    """Return how long the app waits for an answer to one statement (None: no limit)."""
    limit = settings.DB_STATEMENT_TIMEOUT
    return limit + DEADLINE_MARGIN_SECONDS if limit > 0 else None


def check_pooled(connection: DeadlineConnection, *, pool: ConnectionPool) -> None:
    """A pool's `check`: the server is asked when `pools.idle` says so, and every time
    while PostgreSQL is known down; the answer is waited for no longer than a caller waits
    for a connection (a server that does not answer is the outage, not a slow check)."""
    if needs_full_check(connection) or DATABASE.down:
        with connection.deadline_of(pool.timeout):
            ConnectionPool.check_connection(connection)


def check_role(*, cursor_of: Any) -> None:
    """Refuse to run as a role that RLS would not hold: a superuser, BYPASSRLS, or one that
    inherits the maintenance role's policies (it must only be able to switch to it)."""
    with cursor_of.cursor() as cursor:
        cursor.execute(
            "SELECT rolsuper, rolbypassrls, rolinherit FROM pg_roles WHERE rolname = current_user"
        )
        superuser, bypass, inherit = cursor.fetchone()
    if superuser or bypass or inherit:
        raise ImproperlyConfigured(
            f"The app's database role {rls.APP_ROLE} must be NOSUPERUSER NOBYPASSRLS NOINHERIT"
            " (docs/row-level-security.md)."
        )


class DatabaseCreation(creation.DatabaseCreation):
    def create_test_db(self, *args: Any, **kwargs: Any) -> str:
        with rls.owner_mode():
            return super().create_test_db(*args, **kwargs)

    def destroy_test_db(self, *args: Any, **kwargs: Any) -> None:
        with rls.owner_mode():
            super().destroy_test_db(*args, **kwargs)


class DatabaseWrapper(base.DatabaseWrapper):
    creation_class = DatabaseCreation

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rls_owner = False  # this connection runs as the login (owner mode)
        self.rls_applied: rls.Scope | None = None  # the scope of the open transaction
        self.execute_wrappers.append(rls.execute_in_scope)

    def get_new_connection(self, conn_params: Any) -> Any:
        """Connect (from the pool), reporting PostgreSQL's outages and recoveries
        (core/outages.py). While it is known down, the pool is asked only briefly: each
        request and socket would otherwise wait the pool's whole timeout (sockets
        authenticate on one shared thread, one after another). The pool goes on
        reconnecting meanwhile."""
        pool = self.pool
        if pool is not None:
            pool.timeout = OUTAGE_POOL_TIMEOUT if DATABASE.down else self._pool_timeout()
        try:
            connection = super().get_new_connection(conn_params)
        except Exception as exc:
            if outage_of(exc) is DATABASE:
                DATABASE.failed(exc)
            raise
        DATABASE.recovered()
        return connection

    @property
    def pool(self) -> Any:
        """Django's pool, of connections with a deadline, checked by `check_pooled`."""
        pool = super().pool
        if pool is not None and pool.connection_class is not DeadlineConnection:
            # Django passes no other way to set them; no connection is made before `open()`.
            pool.connection_class = DeadlineConnection
            if pool._check is ConnectionPool.check_connection:
                pool._check = functools.partial(check_pooled, pool=pool)
        return pool

    def _pool_timeout(self) -> float:
        options = self.settings_dict["OPTIONS"].get("pool")
        return float(options.get("timeout", 30.0)) if isinstance(options, dict) else 30.0

    def _configure_role(self, connection: Any) -> bool:
        return False  # not once per physical connection: per checkout, below

    def init_connection_state(self) -> None:
        super().init_connection_state()
        raw = self.connection
        owner = rls.in_owner_mode()
        want = "" if owner else rls.APP_ROLE
        # Migrations and flush (owner mode) run as long as they take.
        deadline = None if owner else statement_deadline()
        limit_ms = 0 if deadline is None else round(settings.DB_STATEMENT_TIMEOUT * 1000)
        if isinstance(raw, DeadlineConnection):  # not the test database's creation
            raw.deadline = deadline
        switch_role = getattr(raw, "chat_role", None) != want
        statements = [f"SET ROLE {want}" if want else "RESET ROLE"] if switch_role else []
        if getattr(raw, "chat_statement_timeout", None) != limit_ms:
            statements.append(f"SET statement_timeout = {limit_ms:d}")
        if statements:
            with raw.cursor() as cursor:
                cursor.execute("; ".join(statements))
            if want and switch_role:
                check_role(cursor_of=raw)
            if not raw.autocommit:
                raw.commit()
            raw.chat_role, raw.chat_statement_timeout = want, limit_ms
        self.rls_owner = not want
        self.rls_applied = None
