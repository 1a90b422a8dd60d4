"""Running the suite on several processes (pytest-xdist): isolation and scheduling.

`bin/test` runs one worker per core (`-n`); much of the suite waits on servers it started
(Daphne, the fake model, Chromium), so two workers on two cores nearly halve the time.
Each worker gets its own test database (pytest-django names it after the worker), its own
Redis database (so its own channel-layer prefix) and its own var/ directory
(`isolate_this_process`).

Tests are handed out a module at a time (a module's fixtures, such as a fake model server
or a Daphne, start once), the slowest modules first so that no worker is left with a long
one at the end, and browser tests last: sync Playwright keeps an event loop running on the
worker's main thread, where async tests can no longer start theirs. The cluster's modules
share one cluster (three Daphnes behind HAProxy), so they go to one worker together.
"""

from __future__ import annotations

import itertools
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
# Worker gwN uses Redis database FIRST_WORKER_REDIS_DB + N (a Redis server has 16).
FIRST_WORKER_REDIS_DB = 8
MAX_WORKERS = 16 - FIRST_WORKER_REDIS_DB
BROWSER_FOLDER = "tests/e2e/"  # every browser test, and nothing else
# Scopes whose tests, together, take far longer than their count says (seconds, measured with
# three workers on a 2-core machine, `--durations=0`): handed out first. Any other module
# weighs SECONDS_PER_TEST per test.
SECONDS_PER_TEST = 0.5
SLOW_SCOPES: dict[str, float] = {
    "tests/realtime/test_two_processes.py": 158,
    "tests/realtime/test_reconnect_exact.py": 135,
    "tests/integration/test_real_model.py": 133,
    "tests/cluster": 69,
    "tests/fuzz/test_api_fuzz.py": 60,
    "tests/realtime/test_first_message_and_temporary.py": 53,
    "tests/realtime/test_large_and_slow.py": 48,
    "tests/fuzz/test_socket_fuzz.py": 46,
    "tests/conversations/test_chat_command.py": 39,
    "tests/e2e/test_accessibility.py": 136,
    "tests/e2e/test_screenshots.py": 86,
    "tests/e2e/test_chat.py": 62,
    "tests/e2e/test_shell.py": 46,
}


ISOLATED = "CHAT_TEST_ISOLATED"  # the process (xdist worker, or "main") isolated already
VAR_BASE = "CHAT_TEST_VAR_BASE"  # the var/ the tests' own directories go under


def isolate_this_process() -> None:
    """Give this test process a var/ directory of its own, and an xdist worker its own Redis
    database (and so its own channel-layer prefix, core/groups.py).

    Runs from tests/settings.py, the settings the tests run with, so before Django reads
    REDIS_URL and CHAT_VAR_DIR: pytest-django loads the settings before any conftest, and
    isolating from the conftest left every worker's settings on the Redis database given
    (two workers' rate windows, reply progress and flushes met there). Rate counters, reply
    progress and user groups live in Redis keyed by ids that every worker's database hands
    out alike, so two workers must not share a Redis database; and tests never write into
    the var/ of the app a developer runs (its SQLite checkpoints, its uploads).

    Once per process: a subprocess a test starts (a worker run through manage.py) inherits
    the result and keeps what the test gave it.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if os.environ.get(ISOLATED) == (worker or "main"):
        return
    base = Path(os.environ.get(VAR_BASE) or os.environ.get("CHAT_VAR_DIR") or ROOT / "var")
    os.environ[VAR_BASE] = str(base)
    os.environ["CHAT_VAR_DIR"] = str(base / "tests" / (worker or "main"))
    redis_url = os.environ.get("REDIS_URL", "")
    if worker and redis_url:
        number = int(worker.removeprefix("gw"))
        if number >= MAX_WORKERS:
            raise RuntimeError(f"at most {MAX_WORKERS} workers: each needs a Redis database")
        db = FIRST_WORKER_REDIS_DB + number
        os.environ["REDIS_URL"] = urlsplit(redis_url)._replace(path=f"/{db}").geturl()
    os.environ[ISOLATED] = worker or "main"


# Ports for servers the tests start, a band per process below the kernel's ephemeral range
# (32768+), from which bind(0) hands out ports: asked for twice in a row, bind(0) could
# answer the same port before the first server had bound it (two Daphnes on one port).
PORT_BASE, PORT_BAND = 20_000, 1_500
_ports = itertools.count()


def free_port() -> int:
    """Return a port no server listens on, never the same twice in this process, and never
    one another worker's band holds."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    band = PORT_BASE + (int(worker.removeprefix("gw")) + 1 if worker else 0) * PORT_BAND
    for _ in range(PORT_BAND):
        port = band + next(_ports) % PORT_BAND
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port in this worker's band")


def check_browser_tests(items: list) -> None:
    """Refuse a browser test outside tests/e2e/: the scheduler tells them by their folder."""
    strays = [
        item.nodeid
        for item in items
        if item.get_closest_marker("browser") is not None
        and not item.nodeid.startswith(BROWSER_FOLDER)
    ]
    if strays:
        raise RuntimeError(f"browser tests belong in {BROWSER_FOLDER}: {strays[:3]}")


def scope_of(nodeid: str) -> str:
    """Return the unit a test is handed out in: its module, or the cluster."""
    path = nodeid.split("::", 1)[0]
    return "tests/cluster" if path.startswith("tests/cluster/") else path


def weight_of(scope: str, tests: int) -> float:
    """Return how long a unit is expected to take, in seconds."""
    return SLOW_SCOPES.get(scope, SECONDS_PER_TEST * tests)


def make_scheduler(config, log):
    """Return the scheduler described at the top of this module."""
    from xdist.scheduler import LoadScopeScheduling

    class SlowestModuleFirst(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the queue is complete on the first assignment
                self.ordered = True
                units = sorted(
                    self.workqueue.items(),
                    key=lambda unit: (
                        unit[0].startswith(BROWSER_FOLDER),
                        -weight_of(unit[0], len(unit[1])),
                    ),
                )
                self.workqueue.clear()
                self.workqueue.update(units)
            super()._assign_work_unit(node)

    return SlowestModuleFirst(config, log)
