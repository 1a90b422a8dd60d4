"""PostgreSQL or Redis out of reach: noticed in one place, logged once when it starts and
once when it ends.

While a service is down, everything that needs it fails: each request, each socket, a
library's own retry loop every second (channels_redis' receiver, psycopg's pool), each
with a traceback. Here an `Outage` logs one warning when its service is first seen
unreachable and one when it is reached again; the log filter `QuietOutages` (installed in
settings.LOGGING) drops every other record that only repeats it.

Seen down: any failure `outage_of` recognises (a refused or lost connection, a pool that
found no connection in time, a server that did not answer a statement in time: see
DB_STATEMENT_TIMEOUT in core/db/postgresql). Seen up again: a new connection made
(core/db/postgresql/base.py for Django's; the Redis connections of `redis_connection_class`).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from typing import Any

logger = logging.getLogger(__name__)

# SQLSTATEs of a server that cannot serve: class 08 (connection exception), shutting down,
# starting up, out of connection slots. Not 57014: a statement that PostgreSQL ended at its
# `statement_timeout` is that query's failure; the server answered.
_UNREACHABLE_STATES = {"57P01", "57P02", "57P03", "53300"}


class Outage:
    """Whether one service is out of reach, as this process last saw it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.down_since: float | None = None
        self._lock = threading.Lock()

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def failed(self, error: BaseException | str) -> None:
        """Note that the service could not be reached; log it if it was up until now."""
        with self._lock:
            if self.down_since is not None:
                return
            self.down_since = time.monotonic()
        logger.warning("%s unreachable: %s", self.name, _one_line(error))

    def recovered(self) -> None:
        """Note that the service answered; log it if it was down."""
        if self.down_since is None:  # the usual case, without the lock
            return
        with self._lock:
            if self.down_since is None:
                return
            took = time.monotonic() - self.down_since
            self.down_since = None
        logger.warning("%s reachable again after %.1f s", self.name, took)


DATABASE = Outage("PostgreSQL")
REDIS = Outage("Redis")


def _causes(error: BaseException | None) -> list[BaseException]:
    """Return `error` and what it was raised from (`raise ... from`, as Django wraps
    psycopg's errors); not what was being handled meanwhile, which may be unrelated."""
    chain: list[BaseException] = []
    while error is not None and all(error is not seen for seen in chain):
        chain.append(error)
        error = error.__cause__
    return chain


def _database_unreachable(error: BaseException) -> bool:
    import psycopg

    if not isinstance(error, psycopg.OperationalError):
        return False
    state = getattr(error, "sqlstate", None)  # None: no server answered (refused, lost, timed out)
    return state is None or state.startswith("08") or state in _UNREACHABLE_STATES


def _redis_unreachable(error: BaseException) -> bool:
    from redis.exceptions import ConnectionError, TimeoutError

    return isinstance(error, ConnectionError | TimeoutError)


def outage_of(error: BaseException | None) -> Outage | None:
    """Return the outage `error` shows (PostgreSQL or Redis out of reach), or None."""
    for cause in _causes(error):
        if _database_unreachable(cause):
            return DATABASE
        if _redis_unreachable(cause):
            return REDIS
    return None


def statement_timed_out(error: BaseException | None) -> bool:
    """Say whether PostgreSQL ended a statement at `statement_timeout` (DB_STATEMENT_TIMEOUT):
    a lock held too long, a server too busy. It answered: not an outage."""
    import psycopg

    for cause in _causes(error):
        if isinstance(cause, psycopg.errors.QueryCanceled) and "statement timeout" in str(cause):
            return True
    return False


def is_database_error(error: BaseException | None) -> bool:
    """Say whether `error` came from a database (PostgreSQL, SQLite; Django's wrappers too)."""
    import psycopg

    for cause in _causes(error):
        if isinstance(cause, psycopg.Error | sqlite3.Error):
            return True
        if type(cause).__module__ == "django.db.utils":  # Django's DatabaseError family
            return True
    return False


def _one_line(error: BaseException | str) -> str:
    if isinstance(error, str):
        return error
    text = " ".join(str(error).split()) or type(error).__name__
    return f"{type(error).__name__}: {text}"[:300]


def _error_in(record: logging.LogRecord) -> BaseException | None:
    if record.exc_info and record.exc_info[1] is not None:
        return record.exc_info[1]
    args = record.args.values() if isinstance(record.args, dict) else record.args or ()
    return next((arg for arg in args if isinstance(arg, BaseException)), None)


# Libraries that keep retrying on their own and log each attempt, some without the error
# attached ("reconnection attempt ... failed"): quiet while their service is known down.
_RETRYING_LOGGERS = (("psycopg.pool", DATABASE), ("channels_redis", REDIS))


class QuietOutages(logging.Filter):
    """A logging filter: a record caused by an outage is replaced by the outage's one warning."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == __name__:
            return True
        error = _error_in(record)
        outage = outage_of(error)
        if outage is not None:
            outage.failed(error)  # type: ignore[arg-type]
            return False
        if getattr(record, "status_code", None) == 503 and (DATABASE.down or REDIS.down):
            return False  # django.request's line for each 503 answered meanwhile
        return not any(
            record.name.startswith(prefix) and watched.down and record.levelno <= logging.ERROR
            for prefix, watched in _RETRYING_LOGGERS
        )


def redis_connection_class(url: str) -> type[Any]:
    """Return the asyncio Redis connection class for `url` that reports outages and recoveries."""
    from redis.asyncio import connection

    base = {
        "unix": connection.UnixDomainSocketConnection,
        "rediss": connection.SSLConnection,
    }.get(url.partition(":")[0], connection.Connection)
    return _WATCHED.setdefault(base, type(f"Watched{base.__name__}", (_Watched, base), {}))


class _Watched:
    """Mixed into a redis-py asyncio connection: every (re)connection reports to REDIS."""

    async def connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        from redis.exceptions import ConnectionError, TimeoutError

        if self.is_connected:  # type: ignore[attr-defined]
            return  # nothing is learnt from a connection made earlier
        try:
            await super().connect_check_health(*args, **kwargs)  # type: ignore[misc]
        except (ConnectionError, TimeoutError, OSError) as exc:
            REDIS.failed(exc)
            raise
        REDIS.recovered()


_WATCHED: dict[type[Any], type[Any]] = {}
