"""The processes a benchmark runs and watches: ports, starting a server, its memory and CPU."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from contextlib import contextmanager, suppress
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


def raise_fd_limit() -> int:
    """Raise this process's open-file limit to its hard limit (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def own_cpu_seconds() -> float:
    """Return the CPU time this (client) process has used so far."""
    times = os.times()
    return times.user + times.system


def start_py_spy(pid: int, outs: str, seconds: int) -> list[subprocess.Popen]:
    """Record the server's stacks for `seconds`: to each of the comma-separated `outs`,
    an SVG flame graph (.svg) or collapsed stacks (anything else). PY_SPY_RATE samples a
    second (50), PY_SPY_FLAGS more flags (`--gil`: only what holds the GIL, near its CPU)."""
    rate, flags = os.environ.get("PY_SPY_RATE", "50"), os.environ.get("PY_SPY_FLAGS", "").split()
    spies = []
    for out in outs.split(","):
        cmd = ["uv", "tool", "run", "py-spy", "record", "--nonblocking", "-r", rate, *flags]
        cmd += ["-f", "flamegraph" if out.endswith(".svg") else "raw"]
        cmd += ["-o", out, "--pid", str(pid), "-d", str(seconds)]
        spies.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return spies


def pin(pid: int, cores: set[int]) -> None:
    """Run every thread of process `pid` (those it starts later too) on `cores` only."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        with suppress(ProcessLookupError):  # a thread that just ended
            os.sched_setaffinity(int(task.name), cores)


def family(pid: int) -> list[int]:
    """`pid` and every process below it (Granian serves from a worker process it starts)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with suppress(OSError, IndexError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        found.append(current := todo.pop())
        todo.extend(children.get(current, []))
    return found


def pin_all(pid: int, cores: set[int]) -> None:
    for member in family(pid):
        with suppress(OSError):
            pin(member, cores)


def server_cpu_seconds(pid: int) -> float:
    """The CPU time of a server and the processes it started."""
    total = 0.0
    for member in family(pid):
        with suppress(OSError):
            total += cpu_seconds(member)
    return total


def server_rss_mb(pid: int) -> float:
    return round(sum(rss_mb(member) for member in family(pid)), 1)
