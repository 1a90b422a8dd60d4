"""`manage.py worker` as a real process for tests, on the test's database: run to the end of
the tasks ready (`run_batch`), or kept running beside a server (`start`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_batch(env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess:
    """Run a worker until no task is ready; fail the test if it does not end well."""
    command = [sys.executable, "manage.py", "worker", "--batch", "--interval", "0"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=timeout)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done


def start(env: dict[str, str], *extra: str, log=subprocess.DEVNULL) -> subprocess.Popen:
    """Start a worker polling every 0.2 s, in its own process group (to kill it whole)."""
    return subprocess.Popen(
        [sys.executable, "manage.py", "worker", "--interval", "0.2", *extra],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT if log is not subprocess.DEVNULL else subprocess.PIPE,
        start_new_session=True,
    )
