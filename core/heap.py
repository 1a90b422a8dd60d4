"""Keep the cyclic garbage collector's full passes short in a long-running server process.

Once a process has answered its first reply it holds about 330,000 objects that live as
long as it does (Django, LangChain and LangGraph, pydantic schemas, the compiled graph,
module state). Python's full (generation-2) collection walks every one of them, although
none is garbage: measured in one Daphne process streaming 100 replies (bench/capacity.py,
a `gc.callbacks` timer and a loop-lag probe), several full passes a minute of 195–269 ms
each, every stream stalled meanwhile; with those objects frozen, 24–78 ms. So after the
first reply is stored they are moved out of the collector's sight (`gc.freeze`), once per
process. A frozen object that is later dropped is still freed by reference counting; only
a reference cycle among frozen objects would be kept, and what is in flight at that moment
is one reply's worth, once.

Then the youngest generation is collected every 10,000 new container objects instead of
700. A streaming reply keeps its frames, chunks and tasks alive for its whole length, so a
young collection mostly walks live objects and promotes them, and the older generations
fill and are walked in turn. bench/capacity.py, alternated runs on one machine (medians of
2): server CPU at 100 streams 23.0 -> 21.4 s, at 200 35.2 -> 31.9 s, added latency p50 at
200 30 -> 6.6 ms, no full collection during a step; RSS +3 MB. 50,000 saved no more.
"""

from __future__ import annotations

import gc
import logging
import time

logger = logging.getLogger(__name__)

_settled = False
YOUNG_THRESHOLD = 10_000  # Python's default: 700


def settle_once() -> None:
    """Collect, then freeze what survives, the first time it is called in this process."""
    global _settled
    if _settled:
        return
    _settled = True
    started = time.perf_counter()
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    logger.info(
        "%d long-lived objects frozen out of full collections (%.0f ms)",
        gc.get_freeze_count(),
        (time.perf_counter() - started) * 1000,
    )
