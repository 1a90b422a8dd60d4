"""Time one query with row-level security on and off, interleaved sample by sample in one run.

Both sides run on the same warm connection. On: as the app runs it, the role `chat_app` in
the user's scope. Off: the connection switched back to its login, the tables' owner (a
superuser here, which RLS never applies to), with only `app.user_id` set for the session:
the search functions (core/migrations/0002) read it to find the user. The switches happen
outside the clock.
"""

from __future__ import annotations

import contextlib
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2), "p95_ms": round(p95 * 1000, 2)}


@contextlib.contextmanager
def rls_off(user_id: int) -> Iterator[None]:
    """Run the block on Django's connection as its login, `app.user_id` set to `user_id`."""
    from django.db import connection

    from core import rls

    connection.ensure_connection()
    raw = connection.connection
    with raw.cursor() as cursor:  # psycopg's own: not through the scope wrapper
        cursor.execute("RESET ROLE")
        cursor.execute("SELECT set_config('app.user_id', %s, false)", [str(user_id)])
    connection.rls_owner = True  # the wrapper applies no scope (as in rls.owner_mode())
    try:
        yield
    finally:
        with raw.cursor() as cursor:
            cursor.execute(f"SET ROLE {rls.APP_ROLE}")
            cursor.execute("SELECT set_config('app.user_id', '', false)")
        connection.rls_owner = False
        connection.rls_applied = None


def _size(answer: Any) -> int:
    return len(getattr(answer, "items", answer))


def measure_rls(
    query: Callable[[Any], object],
    cases: Sequence[tuple[int, Any]],
    rng: random.Random,
    samples: int,
) -> dict[str, object]:
    """Time `query(case)` for random (user id, case) pairs with RLS on and off, the same case
    for both, alternating which goes first. The first round warms up, and checks that both
    sides answer the same (and something)."""
    from core import rls

    times: dict[str, list[float]] = {"rls_on": [], "rls_off": []}
    for n in range(samples + 1):
        user_id, case = rng.choice(cases)
        answers = {}
        for mode in ("rls_on", "rls_off") if n % 2 else ("rls_off", "rls_on"):
            with rls.as_user(user_id) if mode == "rls_on" else rls_off(user_id):
                started = time.perf_counter()
                answers[mode] = query(case)
                elapsed = time.perf_counter() - started
            if n:
                times[mode].append(elapsed)
        if not n:
            assert answers["rls_on"] == answers["rls_off"], answers
            assert _size(answers["rls_on"]), f"nothing found for {case!r}"
    result: dict[str, Any] = {mode: percentiles(t) for mode, t in times.items()}
    for stat in ("p50", "p95"):
        on, off = result["rls_on"][f"{stat}_ms"], result["rls_off"][f"{stat}_ms"]
        result[f"rls_{stat}_ratio"] = round(on / off, 3)
    return result
