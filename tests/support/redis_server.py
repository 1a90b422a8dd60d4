"""A Redis server of a test's own, on a free port, that the test may stop and start again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support.daphne import free_port, wait_for_port


def redis_available() -> bool:
    return shutil.which("redis-server") is not None


class RedisServer:
    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.directory = directory
        self.proc: subprocess.Popen | None = None

    def start(self) -> RedisServer:
        cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        cmd += ["--save", "", "--appendonly", "no", "--dir", str(self.directory)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc, timeout=10)
        return self

    def stop(self) -> None:
        """Kill it (as a crash would): every connection is cut, new ones are refused."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
