"""`GET /healthz` for load balancers (SPEC: Operations): 200 when PostgreSQL and Redis answer,
503 naming what is down."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from .outages import DATABASE, REDIS, outage_of

REDIS_TIMEOUT_SECONDS = 2.0
# Checks at once wait for one of these connections (docs/deployment.md).
REDIS_CONNECTIONS = 2
_redis_clients: dict[str, object] = {}


def database_status() -> str:
    """Return "ok" when the database answers a query, else "down"."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as exc:
        if outage_of(exc) is not None:
            DATABASE.failed(exc)
        return "down"
    return "ok"


def redis_status() -> str:
    """Return "ok" when Redis answers PING, "down" when not, "absent" without REDIS_URL."""
    url = settings.REDIS_URL
    if not url:
        return "absent"
    import redis

    client = _redis_clients.get(url)
    if client is None:
        pool = redis.BlockingConnectionPool.from_url(
            url,
            max_connections=REDIS_CONNECTIONS,
            timeout=REDIS_TIMEOUT_SECONDS,
            socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
            socket_timeout=REDIS_TIMEOUT_SECONDS,
            client_name="chat-health",
        )
        client = _redis_clients[url] = redis.Redis.from_pool(pool)
    try:
        client.ping()  # type: ignore[attr-defined]
    except redis.RedisError as exc:
        REDIS.failed(exc)
        return "down"
    REDIS.recovered()
    return "ok"


@login_not_required
@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Answer whether this process can reach its database and Redis."""
    status = {"db": database_status(), "redis": redis_status()}
    healthy = all(value in ("ok", "absent") for value in status.values())
    return JsonResponse(status, status=200 if healthy else 503)
