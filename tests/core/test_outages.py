"""Which failures are outages, and an outage logged once when it starts and once when it ends."""

from __future__ import annotations

import logging

import psycopg
import pytest
from django.db import utils as db_utils
from psycopg_pool import PoolTimeout
from redis.exceptions import ConnectionError as RedisConnectionError

from core import outages
from core.outages import DATABASE, REDIS, QuietOutages, is_database_error, outage_of


@pytest.fixture(autouse=True)
def services_up():
    DATABASE.down_since = REDIS.down_since = None
    yield
    DATABASE.down_since = REDIS.down_since = None


def _wrapped(error: Exception) -> Exception:
    """Raise `error` the way Django's backend does (its own class, from psycopg's)."""
    try:
        try:
            raise error
        except psycopg.OperationalError as exc:
            raise db_utils.OperationalError(str(exc)) from exc
    except db_utils.OperationalError as wrapped:
        return wrapped


def test_a_refused_connection_or_an_empty_pool_is_a_database_outage():
    assert outage_of(psycopg.OperationalError("connection refused")) is DATABASE
    assert outage_of(PoolTimeout("couldn't get a connection after 3.00 sec")) is DATABASE
    assert outage_of(_wrapped(PoolTimeout("no connection"))) is DATABASE
    assert outage_of(RedisConnectionError("Error 111 connecting")) is REDIS


def test_a_query_that_fails_is_not_an_outage():
    assert outage_of(psycopg.errors.UniqueViolation("duplicate key")) is None
    assert outage_of(psycopg.errors.QueryCanceled("statement timeout")) is None
    assert outage_of(db_utils.IntegrityError("duplicate key")) is None
    assert outage_of(ValueError("bad input")) is None
    assert is_database_error(psycopg.errors.UniqueViolation("duplicate key"))
    assert not is_database_error(ValueError("bad input"))


def test_an_error_raised_while_handling_an_outage_is_not_one():
    try:
        try:
            raise PoolTimeout("no connection")
        except PoolTimeout:
            raise KeyError("a bug in the handler") from None
    except KeyError as bug:
        assert outage_of(bug) is None


def test_an_outage_is_logged_once_when_it_starts_and_once_when_it_ends(caplog):
    caplog.set_level(logging.WARNING, logger=outages.__name__)
    for _ in range(20):
        DATABASE.failed(PoolTimeout("no connection"))
    for _ in range(20):
        DATABASE.recovered()
    DATABASE.failed(psycopg.OperationalError("refused"))  # the next outage is news again
    messages = [r.getMessage() for r in caplog.records if r.name == outages.__name__]
    assert len(messages) == 3
    assert messages[0].startswith("PostgreSQL unreachable: PoolTimeout: no connection")
    assert messages[1].startswith("PostgreSQL reachable again after")
    assert messages[2].startswith("PostgreSQL unreachable: OperationalError: refused")


def _record(name: str, message: str, *args, error: BaseException | None = None):
    exc_info = (type(error), error, None) if error is not None else None
    return logging.LogRecord(name, logging.ERROR, __file__, 1, message, args, exc_info)


def test_records_that_repeat_an_outage_are_dropped_and_others_kept(caplog):
    quiet = QuietOutages()
    refused = RedisConnectionError("Error 111 connecting to 127.0.0.1:6380")
    with caplog.at_level(logging.WARNING, logger=outages.__name__):
        assert not quiet.filter(
            _record("channels_redis.pubsub", "Unexpected exception", error=refused)
        )
        assert not quiet.filter(_record("hub", "channel layer unreachable (%s)", refused))
        assert not quiet.filter(_record("channels_redis.pubsub", "still retrying"))
        assert quiet.filter(_record("hub", "something else went wrong"))
        assert quiet.filter(_record("app", "bug", error=ValueError("bad")))
    assert REDIS.down and not DATABASE.down
    assert [r.getMessage() for r in caplog.records if r.name == outages.__name__] == [
        "Redis unreachable: ConnectionError: Error 111 connecting to 127.0.0.1:6380"
    ]


async def test_redis_connections_report_an_outage_and_its_end(settings):
    import redis.asyncio as aioredis

    from core.outages import redis_connection_class
    from tests.conftest import require_service
    from tests.support.daphne import free_port

    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    nowhere = f"redis://127.0.0.1:{free_port()}/0"
    dead = aioredis.Redis.from_url(nowhere, connection_class=redis_connection_class(nowhere))
    live = aioredis.Redis.from_url(
        settings.REDIS_URL, connection_class=redis_connection_class(settings.REDIS_URL)
    )
    try:
        with pytest.raises(RedisConnectionError):
            await dead.ping()
        assert REDIS.down
        assert await live.ping()
        assert not REDIS.down
    finally:
        await dead.aclose()
        await live.aclose()
