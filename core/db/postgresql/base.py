"""PostgreSQL, connected as the app's role, with every transaction in the current RLS scope.

Django's own backend plus four things (core/rls.py explains the scopes):
- each connection runs as `chat_app` (`SET ROLE`, kept for the connection's life: it is the
  same for every user), except in `rls.owner_mode()` (migrations, flush, the test database),
  which runs as the login, the tables' owner. A pooled connection is switched when it is
  checked out in the other mode.
- every statement goes through `rls.execute_in_scope`, which starts its transaction with
  the scope's transaction-local settings.
- creating and destroying the test database happen in owner mode.
- connecting reports PostgreSQL's outages and recoveries, and fails fast during one.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db.backends.postgresql import base, creation
from psycopg_pool import ConnectionPool

from core import rls
from core.outages import DATABASE, outage_of
from core.pg_idle import check_idle_connection

# Seconds a connection is waited for while PostgreSQL is known to be down.
OUTAGE_POOL_TIMEOUT = 0.5


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
            " (README: Row-level security)."
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
        """Django's pool, checking connections with `core.pg_idle`."""
        pool = super().pool
        if pool is not None and pool._check is ConnectionPool.check_connection:
            pool._check = check_idle_connection  # Django passes no other way to set it
        return pool

    def _pool_timeout(self) -> float:
        options = self.settings_dict["OPTIONS"].get("pool")
        return float(options.get("timeout", 30.0)) if isinstance(options, dict) else 30.0

    def _configure_role(self, connection: Any) -> bool:
        return False  # not once per physical connection: per checkout, below

    def init_connection_state(self) -> None:
        super().init_connection_state()
        raw = self.connection
        want = "" if rls.in_owner_mode() else rls.APP_ROLE
        if getattr(raw, "chat_role", None) != want:
            with raw.cursor() as cursor:
                cursor.execute(f"SET ROLE {want}" if want else "RESET ROLE")
            if want:
                check_role(cursor_of=raw)
            if not raw.autocommit:
                raw.commit()
            raw.chat_role = want
        self.rls_owner = not want
        self.rls_applied = None
