"""The Django settings of the backing services: the database from DATABASE_URL, the
channel layer and cache from REDIS_URL (chatsite/settings.py reads the environment)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url

from core.groups import layer_prefix
from core.outages import redis_connection_class


def database(url: str, *, pool_size: int, pool_timeout: float, var_dir: Path) -> dict[str, Any]:
    """DATABASES["default"] for `url`: PostgreSQL pooled, under row-level security; or SQLite."""
    db = dj_database_url.parse(url, conn_max_age=0)
    if db["ENGINE"] != "django.db.backends.postgresql":
        db["OPTIONS"] = {"timeout": 20, "transaction_mode": "IMMEDIATE"}
        db["TEST"] = {"NAME": str(var_dir / "test_db.sqlite3")}
        return db
    # CONN_MAX_AGE > 0 leaks connections under ASGI; Django 5.2's psycopg pool does not.
    # With PostgreSQL out of reach a request waits at most pool_timeout for a connection
    # (then 503, core/unavailable.py), not psycopg's 30 s; a pool that gave up reconnecting
    # (after DB_RECONNECT_SECONDS) tries again on the next request, so it recovers at once.
    db["OPTIONS"] = {
        "connect_timeout": int(os.environ.get("DB_CONNECT_TIMEOUT", 3)),
        # A server whose packets stop being acknowledged (a cut link) fails a query within
        # this many ms instead of TCP's ~15 minutes of retransmissions. What still
        # acknowledges (a proxy, a frozen host's kernel) is DB_STATEMENT_TIMEOUT's to end.
        "tcp_user_timeout": int(os.environ.get("DB_TCP_USER_TIMEOUT_MS", 10_000)),
        "keepalives": 1,
        "keepalives_idle": 30,
        "keepalives_interval": 5,
        "keepalives_count": 3,
        "pool": {
            "min_size": 1,
            "max_size": pool_size,
            "timeout": pool_timeout,
            "reconnect_timeout": float(os.environ.get("DB_RECONNECT_SECONDS", 5)),
        },
    }
    # A pooled connection is checked when it is handed out: one the server dropped (a
    # restart) is replaced, not failed on. The check asks the server only when something
    # arrived on the idle socket (pools/idle.py).
    db["CONN_HEALTH_CHECKS"] = True
    # The test database must be UTF-8 so pg_trgm sees Korean trigrams.
    db["TEST"] = {"TEMPLATE": "template0", "CHARSET": "UTF8"}
    # Django's backend, connected as the role `chat_app` with row-level security applied
    # to every transaction (core/rls.py; SPEC "Row-level security").
    db["ENGINE"] = "core.db.postgresql"
    return db


def tasks(database: dict[str, Any]) -> dict[str, Any]:
    """TASKS: on PostgreSQL, tasks wait in the database for `manage.py worker` (any number,
    on any machine: claimed with SKIP LOCKED); on SQLite they run where they are enqueued,
    so `bin/run` stays one command. CHAT_TASKS=immediate|database chooses otherwise."""
    chosen = os.environ.get("CHAT_TASKS") or (
        "database" if database["ENGINE"] == "core.db.postgresql" else "immediate"
    )
    if chosen == "database":
        return {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    return {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


def channel_layers(redis_url: str | None) -> dict[str, Any]:
    """CHANNEL_LAYERS: Redis pub/sub across processes, or in memory (one process)."""
    if not redis_url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    return {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            # redis-py's 5 s socket timeout equals the layer's receive wait and drops idle
            # sockets with 1011; its pool stops at 100 connections (channels_redis#422).
            "CONFIG": {
                # Pub/sub ignores database numbers: channels named after ours.
                "prefix": layer_prefix(redis_url),
                # Each (re)connection reports an outage or its end (core/outages.py).
                "hosts": [
                    {
                        "address": redis_url,
                        "socket_timeout": None,
                        "max_connections": 1000,
                        "connection_class": redis_connection_class(redis_url),
                        "client_name": "chat-layer",  # as CLIENT LIST names it
                    }
                ],
            },
        }
    }


def caches(redis_url: str | None) -> dict[str, Any]:
    """CACHES: Redis (shared by every process: rate limits), or this process's memory."""
    if not redis_url:
        return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": "chat",
        }
    }
