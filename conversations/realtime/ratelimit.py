"""CHAT_RATE_LIMIT ("30/m"): messages a user may send in any window of that length
(and the other per-user limits: CHAT_SYNC_RATE_LIMIT for a socket's `sync`, …).

A moving (sliding) window, not fixed slots: a user never gets more than the limit in
any 60 seconds, also across a minute boundary and across processes. The `limits`
library keeps the window (a Redis list trimmed by one Lua script per hit, on the same
redis-py client as the rest of the app; in-process memory in the embedded mode).

While Redis is unreachable the check **fails open** (the message goes through, a
warning is logged): the limit protects the model budget over minutes, and refusing
every message during a Redis restart would turn a seconds-long blip into an outage.

`check_rate` is the sync twin, for sync views: CHAT_SEARCH_RATE_LIMIT ("60/m") searches
(`GET /search/messages`). It keeps the same windows, through a sync Redis client.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
import weakref
from typing import Any

import limits.storage
import limits.strategies
from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from limits import RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.exceptions import RedisError

from core.errors import RateLimited

from .redis import get_redis

logger = logging.getLogger(__name__)

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# The refusal of each kind counted, a whole sentence each (languages word counts differently).
REFUSALS = {
    "messages": gettext_noop(
        "More than %(count)s messages in %(window)s seconds; try again later."
    ),
    "syncs": gettext_noop("More than %(count)s syncs in %(window)s seconds; try again later."),
    "searches": gettext_noop(
        "More than %(count)s searches in %(window)s seconds; try again later."
    ),
}
KEY_PREFIX = "chat:rate"

# Storage (and its locks or connections) belongs to the loop that made it.
_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, MovingWindowRateLimiter] = (
    weakref.WeakKeyDictionary()
)
# The sync twin's, one per process: redis-py's sync pool and MemoryStorage are thread-safe.
_sync_limiters: dict[str, limits.strategies.MovingWindowRateLimiter] = {}
_sync_lock = threading.Lock()


def parse_rate(rate: str) -> tuple[int, int]:
    """Return (count, window seconds) of a rate like "30/m" or "100/h"; "" or "0" is no limit."""
    count, _, unit = rate.strip().partition("/")
    window = UNITS.get(unit.strip().lower()[:1] or "m")
    if window is None or not count.strip().isdigit():
        raise ValueError(f"CHAT_RATE_LIMIT must look like '30/m', not {rate!r}")
    return int(count), window


def refusal(*, count: int, what: str, window: int) -> str:
    """Say, in the active language, that more than `count` `what` came in `window` seconds."""
    template = REFUSALS.get(what)
    if template is None:  # a kind with no sentence of its own: named as it is
        return _("More than %(count)s %(what)s in %(window)s seconds; try again later.") % {
            "count": count,
            "what": what,
            "window": window,
        }
    return _(template) % {"count": count, "window": window}


def _limiter() -> MovingWindowRateLimiter:
    loop = asyncio.get_running_loop()
    limiter = _limiters.get(loop)
    if limiter is None:
        client = get_redis()
        storage: Storage
        if client is None:
            storage = MemoryStorage()
        else:
            storage = RedisStorage(
                "async+" + settings.REDIS_URL,
                implementation="redispy",
                key_prefix=KEY_PREFIX,
                connection_pool=client.connection_pool,
            )
        limiter = _limiters[loop] = MovingWindowRateLimiter(storage)
    return limiter


async def acheck_rate(*, user_id: Any, rate: str | None = None, what: str = "messages") -> None:
    """Count one `what` for the user; raise RateLimited past `rate` (CHAT_RATE_LIMIT).

    Each `what` has its own window (messages, syncs, searches…).
    """
    rate = settings.CHAT_RATE_LIMIT if rate is None else rate
    count, window = parse_rate(rate or "0/m")
    if count <= 0:
        return
    item = RateLimitItemPerSecond(count, window)
    limiter = _limiter()
    key = str(user_id) if what == "messages" else f"{what}:{user_id}"
    try:
        if await limiter.hit(item, key):
            return
        stats = await limiter.get_window_stats(item, key)
    except RedisError as exc:
        logger.warning("rate limit not checked (Redis unreachable, failing open): %s", exc)
        return
    retry_after = max(1, math.ceil(stats.reset_time - time.time()))
    raise RateLimited(refusal(count=count, what=what, window=window), retry_after=retry_after)


def _sync_limiter() -> limits.strategies.MovingWindowRateLimiter:
    url = settings.REDIS_URL or ""
    with _sync_lock:
        limiter = _sync_limiters.get(url)
        if limiter is None:
            kept: limits.storage.Storage = (
                limits.storage.RedisStorage(url, key_prefix=KEY_PREFIX)
                if url
                else limits.storage.MemoryStorage()
            )
            limiter = _sync_limiters[url] = limits.strategies.MovingWindowRateLimiter(kept)
        return limiter


def check_rate(*, user_id: Any, rate: str, what: str) -> None:
    """Count one `what` for the user; raise RateLimited past `rate` (from a sync caller)."""
    count, window = parse_rate(rate or "0/m")
    if count <= 0:
        return
    item = RateLimitItemPerSecond(count, window)
    key = str(user_id) if what == "messages" else f"{what}:{user_id}"
    limiter = _sync_limiter()
    try:
        if limiter.hit(item, key):
            return
        stats = limiter.get_window_stats(item, key)
    except RedisError as exc:
        logger.warning("rate limit not checked (Redis unreachable, failing open): %s", exc)
        return
    raise RateLimited(
        refusal(count=count, what=what, window=window),
        retry_after=max(1, math.ceil(stats.reset_time - time.time())),
    )


def reset_local_rates() -> None:
    """Forget the in-process windows (tests)."""
    _limiters.clear()
    with _sync_lock:
        _sync_limiters.clear()
