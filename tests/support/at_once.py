"""Run several calls at the same instant, each in its own thread with its own database
connection (a race the database must settle, as between two processes)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connections


def at_once(call: Callable[[Any], str], args: Sequence[Any]) -> list[Any]:
    """Call `call(arg)` for each of `args` in threads released together by a barrier;
    return each one's outcome in order: what it returned, or the exception it raised."""
    barrier = threading.Barrier(len(args))
    outcomes: list[Any] = [None] * len(args)

    def run(n: int) -> None:
        try:
            barrier.wait()
            outcomes[n] = call(args[n])
        except BaseException as exc:  # surfaced by the caller's assertion
            outcomes[n] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(args))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes
