"""CHAT_RATE_LIMIT ("30/m"): messages a user may send per window, across processes."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings

from ..errors import RateLimited
from .redis import get_redis

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

# Embedded mode: one process, so a dict of fixed windows is exact.
_local: dict[str, tuple[float, int]] = {}


def parse_rate(rate: str) -> tuple[int, int]:
    """Return (count, window seconds) of a rate like "30/m" or "100/h"; "" or "0" is no limit."""
    count, _, unit = rate.strip().partition("/")
    window = UNITS.get(unit.strip().lower()[:1] or "m")
    if window is None or not count.strip().isdigit():
        raise ValueError(f"CHAT_RATE_LIMIT must look like '30/m', not {rate!r}")
    return int(count), window


async def acheck_rate(*, user_id: Any) -> None:
    """Count one message for the user; raise RateLimited past the limit."""
    limit, window = parse_rate(settings.CHAT_RATE_LIMIT or "0/m")
    if limit <= 0:
        return
    slot = int(time.time() // window)
    key = f"chat:rate:{user_id}:{slot}"
    client = get_redis()
    if client is None:
        count = _local_incr(key, window)
    else:
        # SET NX EX then INCR in one round trip: atomic, unlike cache.aincr.
        async with client.pipeline(transaction=True) as pipe:
            pipe.set(key, 0, ex=window, nx=True)
            pipe.incr(key)
            _, count = await pipe.execute()
    if count > limit:
        retry_after = max(1, int((slot + 1) * window - time.time()) + 1)
        raise RateLimited(
            f"More than {limit} messages in {window} seconds; try again later.",
            retry_after=retry_after,
        )


def _local_incr(key: str, window: int) -> int:
    # No await inside, so no other task can interleave on this loop.
    now = time.monotonic()
    for stale in [k for k, (expires, _) in _local.items() if expires < now]:
        del _local[stale]
    expires, count = _local.get(key, (now + window, 0))
    _local[key] = (expires, count + 1)
    return count + 1


def reset_local_rates() -> None:
    """Forget the in-process counters (tests)."""
    _local.clear()
