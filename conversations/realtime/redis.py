"""One asyncio Redis client per event loop, or None when REDIS_URL is unset."""

from __future__ import annotations

import asyncio
import weakref

import redis.asyncio as aioredis
from django.conf import settings

from core.outages import redis_connection_class

CLIENT_NAME = "chat-app"  # as CLIENT LIST names its connections
POOL_WAIT_SECONDS = 5.0  # for a free connection, at most; then the command fails

# A client's connections belong to the loop that opened them (tests run one loop each).
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aioredis.Redis] = (
    weakref.WeakKeyDictionary()
)


def get_redis() -> aioredis.Redis | None:
    """Return this loop's Redis client, or None in the embedded (in-process) mode."""
    url = settings.REDIS_URL
    if not url:
        return None
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        # No socket timeout: an idle connection is not an error (channels_redis#422).
        # Its connections report an outage and its end (core/outages.py). At most
        # REDIS_MAX_CONNECTIONS: past it a command waits for a free connection.
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=settings.REDIS_MAX_CONNECTIONS,
            timeout=POOL_WAIT_SECONDS,
            socket_timeout=None,
            decode_responses=True,
            connection_class=redis_connection_class(url),
            client_name=CLIENT_NAME,
        )
        client = _clients[loop] = aioredis.Redis.from_pool(pool)
    return client


async def aclose_redis() -> None:
    """Close this loop's client (tests, shutdown)."""
    client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()
