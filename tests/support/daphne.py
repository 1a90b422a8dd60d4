"""Real server processes for tests: Daphne on a free port, sharing the test database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings

from tests.parallel import free_port  # one source of ports for every server the tests start

__all__ = ["database_url", "free_port", "start_daphnes", "stop", "wait_for_port"]
BASE_DIR = Path(settings.BASE_DIR)


def database_url() -> str:
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


# Importing the app takes ~15 s of one core; several servers starting at once on a busy
# two-core machine need far longer than that.
START_TIMEOUT = 120.0


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"daphne on {port} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"daphne on {port} did not start")


def start_daphnes(
    tmp_path, base_url: str, redis_url: str, *, count: int = 2, **extra: str
) -> tuple[list[subprocess.Popen], list[int]]:
    """Start `count` Daphne processes on the test database; return them and their ports."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_url,
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": base_url,
        "CHAT_VAR_DIR": str(tmp_path),
        "CHAT_RATE_LIMIT": "1000/m",
        "CHAT_SEARCH_RATE_LIMIT": "1000/m",
        "DJANGO_SETTINGS_MODULE": "chatsite.settings",
        **extra,
    }
    procs, ports = [], []
    for name in "abcdefgh"[:count]:
        port = free_port()
        log = open(tmp_path / f"daphne-{name}.log", "w")  # noqa: SIM115
        cmd = [sys.executable, "-m", "chatsite.serve", "-b", "127.0.0.1", "-p", str(port)]
        procs.append(
            subprocess.Popen(
                [*cmd, "chatsite.asgi:application"], cwd=BASE_DIR, env=env, stdout=log, stderr=log
            )
        )
        ports.append(port)
    try:
        for port, proc in zip(ports, procs, strict=True):
            wait_for_port(port, proc)
    except BaseException:
        stop(procs)  # none is left running when one fails to start
        raise
    return procs, ports


def stop(procs) -> None:
    """Stop the processes (terminate, then kill)."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
