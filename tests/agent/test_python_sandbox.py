"""The sandboxed `python` tool against code that attacks the server running it.

Each attack is one a plain `subprocess.run([sys.executable, "-c", code])` would lose: the
code reaches the network, writes on the host, reads its secrets, forks or allocates or
prints without end. Each test also checks that the server (this process) is unharmed: it
can still fork, no sandboxed process is left, its memory did not grow.
"""

from __future__ import annotations

import asyncio
import base64
import resource
import socket
import struct
import subprocess
import time
import tracemalloc
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.steps import ToolFailed
from agent.tools import python_sandbox, sandbox_runner
from agent.tools.python_sandbox import (
    Limits,
    describe_run,
    make_python_tool,
    run_python,
    sandbox_available,
)
from tests.conftest import require_service

APP_DIR = Path(__file__).resolve().parents[2]
FAST = Limits(wall_seconds=3, cpu_seconds=3)
# the most a run may take: its wall time, the launcher's grace, draining the pipes
MOST_SECONDS = FAST.wall_seconds + sandbox_runner.GRACE_SECONDS + sandbox_runner.DRAIN_SECONDS


@pytest.fixture
def sandbox() -> None:
    require_service(sandbox_available(), "bubblewrap (apt-get install -y bubblewrap)")


@pytest.fixture
def host(sandbox) -> Iterator[None]:
    """After the test: this process can still fork, no sandboxed process is left, and its
    resident memory did not grow by more than a few megabytes."""
    before = _resident_bytes()
    yield
    assert subprocess.run(["/bin/true"], timeout=10).returncode == 0
    assert _sandboxed_processes() == []
    assert _resident_bytes() - before < 30 * 1024 * 1024


def _resident_bytes() -> int:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize()


def _sandboxed_processes(wait_seconds: float = 3.0) -> list[str]:
    """Return the command lines of sandbox processes still alive (after a short wait)."""
    deadline = time.monotonic() + wait_seconds
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if b"/sandbox/main.py" in cmdline or b"Run the model's code inside" in cmdline:
                found.append(cmdline.decode(errors="replace")[:80])
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def tiny_png() -> bytes:
    """Return a 1×1 red PNG, written by hand."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


async def test_code_prints_and_computes(host):
    result = await run_python("print(sum(range(10)))", limits=FAST)

    assert (result.stdout, result.stderr, result.exit_code, result.stopped) == ("45\n", "", 0, None)


async def test_an_image_saved_in_the_working_directory_comes_back(host):
    code = f"open('dot.png', 'wb').write({tiny_png()!r})\nprint('saved')"
    tool = make_python_tool(limits=FAST)

    message = await tool.ainvoke(
        {"type": "tool_call", "id": "call-1", "name": "python", "args": {"code": code}}
    )

    assert "saved" in message.content and "dot.png" in message.content
    assert message.artifact["stopped"] is None
    [image] = message.artifact["images"]
    assert (image["name"], image["content_type"]) == ("dot.png", "image/png")
    assert base64.b64decode(image["data_base64"]) == tiny_png()


async def test_the_network_cannot_be_reached(host):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    code = f"""
import socket
for address in [("127.0.0.1", {port}), ("1.1.1.1", 53), ("1.1.1.1", 443)]:
    try:
        socket.create_connection(address, timeout=2)
        print("connected", address)
    except OSError as exc:
        print("refused", address, exc.errno)
"""
    try:
        result = await run_python(code, limits=FAST)
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()

    assert "connected" not in result.stdout
    assert result.stdout.count("refused") == 3


async def test_writes_outside_the_working_directory_reach_nothing_on_the_host(host):
    name = f"sandbox-{uuid.uuid4().hex}"
    targets = [Path("/tmp") / name, Path("/usr") / name, APP_DIR / name, Path("/root") / name]
    code = f"""
for path in {[str(t) for t in targets]!r} + ["here.txt"]:
    try:
        open(path, "w").write("written from the sandbox")
        print("wrote", path)
    except OSError as exc:
        print("could not write", path)
"""
    result = await run_python(code, limits=FAST)

    assert "wrote here.txt" in result.stdout  # the working directory is writable
    assert [t for t in targets if t.exists()] == []
    for target in targets[1:]:  # /tmp inside is the sandbox's own: writable, then gone
        assert f"could not write {target}" in result.stdout


async def test_files_are_held_to_their_sizes_and_gone_with_the_run(host):
    limits = Limits(wall_seconds=5, file_bytes=4 * 1024 * 1024, work_dir_bytes=8 * 1024 * 1024)
    code = """
import errno
chunk = b"x" * 1024 * 1024
for n in range(100):
    try:
        with open(f"fill-{n}.bin", "wb") as file:
            for _ in range(100):
                file.write(chunk)
                file.flush()
    except OSError as exc:
        print(errno.errorcode[exc.errno])
        if exc.errno == errno.ENOSPC:
            break
open("/tmp/left-behind", "w").write("x")
"""
    filled = await run_python(code, limits=limits)
    after = await run_python("import os\nprint(os.listdir('.'), os.listdir('/tmp'))", limits=limits)

    assert filled.stdout.splitlines()[:2] == ["EFBIG", "EFBIG"]  # 4 MB a file
    assert filled.stdout.splitlines()[-1] == "ENOSPC"  # 8 MB in all
    assert (filled.exit_code, filled.stopped) == (0, None)
    assert after.stdout == "[] []\n"  # a fresh, empty working directory and /tmp


async def test_a_fork_bomb_is_held_to_its_processes_and_stopped_at_the_wall_time(host):
    code = """
import os
me, told = os.getpid(), False
while True:
    try:
        os.fork()
    except OSError:
        if os.getpid() == me and not told:
            print("fork refused", flush=True)
            told = True
"""
    started = time.monotonic()
    result = await run_python(code, limits=Limits(wall_seconds=3, processes=16))

    assert time.monotonic() - started < MOST_SECONDS
    assert result.stopped == "timeout"
    assert "fork refused" in result.stdout  # RLIMIT_NPROC, not only the clock


async def test_each_run_has_its_own_process_budget(host):
    code = """
import os, time
forked = 0
while True:
    try:
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
    except OSError:
        break
    forked += 1
print(forked)
"""
    limits = Limits(wall_seconds=5, processes=10)

    results = await asyncio.gather(*(run_python(code, limits=limits) for _ in range(3)))

    assert [r.stdout for r in results] == ["9\n"] * 3  # 10 processes each, its first included


async def test_a_cancelled_run_leaves_nothing_running(host):
    task = asyncio.create_task(run_python("import time\ntime.sleep(60)", limits=Limits()))
    await asyncio.sleep(0.5)
    assert _sandboxed_processes(wait_seconds=0) != []

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # the host fixture: no sandboxed process left


async def test_ten_gigabytes_are_refused_as_memory(host):
    result = await run_python("data = bytearray(10 * 1024**3)\nprint(len(data))", limits=FAST)

    assert result.stopped == "memory"
    assert "MemoryError" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("code", "stopped"),
    [
        ("while True:\n    pass", "cpu_time"),  # 1 s of CPU comes before 3 s of wall time
        ("import time\nwhile True:\n    time.sleep(1)", "timeout"),
    ],
)
async def test_code_that_never_ends_is_stopped(host, code, stopped):
    limits = Limits(wall_seconds=3, cpu_seconds=1)
    started = time.monotonic()

    result = await run_python(code, limits=limits)

    assert result.stopped == stopped
    assert time.monotonic() - started < MOST_SECONDS


async def test_a_gigabyte_of_output_is_cut_at_the_cap_quickly(host):
    code = "import sys\nfor _ in range(1000):\n    sys.stdout.write('x' * 1_000_000)"
    tracemalloc.start()
    started = time.monotonic()
    try:
        result = await run_python(code, limits=FAST)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert result.stopped == "output_limit"
    assert time.monotonic() - started < 2.5  # not the wall time (3 s)
    assert result.stdout.startswith("x" * FAST.output_bytes)
    assert len(result.stdout) < FAST.output_bytes + 100
    assert "[cut:" in result.stdout
    assert peak < 2 * 1024 * 1024  # the gigabyte was never held here


async def test_the_hosts_secrets_are_not_visible(host, monkeypatch):
    secret = f"secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("CHATSITE_TEST_SECRET", secret)
    paths = ["/etc/shadow", "/etc/passwd", "/proc/1/environ", str(APP_DIR / "chatsite/settings.py")]
    code = f"""
import os
for path in {paths!r}:
    try:
        print("read", path, open(path, "rb").read()[:2000])
    except OSError as exc:
        print("could not read", path)
print(dict(os.environ))
"""
    result = await run_python(code, limits=FAST)

    assert secret not in result.stdout + result.stderr
    assert "CHATSITE_TEST_SECRET" not in result.stdout
    for path in paths:
        assert f"could not read {path}" in result.stdout


async def test_the_code_cannot_take_over_or_kill_the_process_that_watches_it(host):
    code = """
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace", libc.ptrace(16, 1, 0, 0))  # PTRACE_ATTACH to the launcher
try:
    open("/proc/1/mem", "r+b")
    print("mem opened")
except OSError:
    print("mem refused")
os.kill(1, signal.SIGKILL)
os.kill(1, signal.SIGSTOP)
print("still here")
"""
    result = await run_python(code, limits=FAST)

    assert result.stdout.splitlines() == ["ptrace -1", "mem refused", "still here"]
    assert (result.exit_code, result.stopped) == (0, None)


async def test_a_stopped_run_is_an_answer_for_the_model_not_a_failure(host):
    tool = make_python_tool(limits=Limits(wall_seconds=2))

    message = await tool.ainvoke(
        {
            "type": "tool_call",
            "id": "call-1",
            "name": "python",
            "args": {"code": "import time\nprint('started', flush=True)\ntime.sleep(60)"},
        }
    )

    assert message.content.startswith("Stopped: the code ran past 2 seconds.")
    assert "started" in message.content
    assert message.artifact == {"images": [], "stopped": "timeout"}


async def test_a_killed_process_says_by_which_signal(host):
    code = "import os, signal\nprint('before', flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)"

    result = await run_python(code, limits=FAST)

    assert (result.stopped, result.signal, result.stdout) == ("killed", 11, "before\n")
    assert describe_run(result, FAST).splitlines()[0] == (
        "Stopped: the code's process was killed (SIGSEGV)."
    )


async def test_without_bubblewrap_the_tool_fails_with_a_reason(monkeypatch):
    monkeypatch.setattr(sandbox_runner, "BWRAP", "no-such-bwrap")
    tool = make_python_tool()

    with pytest.raises(ToolFailed) as failure:
        await tool.ainvoke({"code": "print(1)"})

    assert failure.value.code == "python.unavailable"
    sandbox_runner.sandbox_available.cache_clear()
    try:
        assert python_sandbox.sandbox_available() is False
    finally:
        sandbox_runner.sandbox_available.cache_clear()


async def test_code_over_the_size_limit_is_refused_before_it_runs():
    tool = make_python_tool(limits=Limits(code_bytes=100))

    with pytest.raises(ToolFailed) as failure:
        await tool.ainvoke({"code": "print(1)\n" * 20})

    assert failure.value.code == "python.too_long"
