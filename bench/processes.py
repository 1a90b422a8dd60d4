"""The processes a benchmark runs and watches: ports, starting a server, its memory and CPU."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process on port {port} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"nothing listens on {port}")


@contextmanager
def serve(cmd: list[str], port: int, env: dict[str, str], log: Path):
    """Run `cmd` until the block ends, once something listens on `port`."""
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=out)
        try:
            wait_for_port(port, proc)
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def daphne_command(port: int) -> list[str]:
    """The app as deployed, on one port (chatsite.serve: Daphne with the app's patches)."""
    return [
        sys.executable,
        *("-m", "chatsite.serve", "-b", "127.0.0.1", "-p", str(port)),
        "chatsite.asgi:application",
    ]


def migrated_django(database_url: str) -> None:
    """Set Django up in this process on `database_url`, migrated."""
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def rss_mb(pid: int) -> float:
    """A process's resident memory now, in MB (one decimal)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
