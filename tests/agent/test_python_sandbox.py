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
import shutil
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
    SandboxUnavailable,
    describe_run,
    make_python_tool,
    run_python,
    sandbox_available,
)
from agent.tools.sandbox_cgroup import RunCgroup, own_cgroup, usable_parent
from agent.tools.sandbox_queue import RUNS_AT_ONCE, RunQueue, run_queue
from tests.conftest import require_service

APP_DIR = Path(__file__).resolve().parents[2]
MB = 1024 * 1024
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


def _code_resident_bytes() -> int:
    """Return the resident memory of the sandboxed code's processes, together."""
    total = 0
    for entry in Path("/proc").iterdir():
        try:
            if b"/sandbox/main.py" in (entry / "cmdline").read_bytes():
                status = (entry / "status").read_text()
                total += int(status.split("VmRSS:")[1].split()[0]) * 1024
        except (OSError, IndexError):
            continue  # not a process, ended meanwhile, or a zombie
    return total


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
    limits = Limits(wall_seconds=5, processes=3)
    three_at_once = RunQueue(at_once=3)

    results = await asyncio.gather(
        *(run_python(code, limits=limits, queue=three_at_once) for _ in range(3))
    )

    assert [r.stdout for r in results] == ["2\n"] * 3  # 3 processes each, its first included


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


FORK_AND_HOLD = """
import os, time
pids, forks_refused = [], 0
for _ in range(8):
    try:
        pid = os.fork()
    except OSError:
        forks_refused += 1
        continue
    if pid == 0:
        try:
            block = bytearray(b"x") * (400 * 1024 * 1024)  # written, so resident
        except MemoryError:
            os._exit(3)
        time.sleep(1.5)  # held while the others try
        os._exit(0)
    pids.append(pid)
statuses = [os.waitpid(pid, 0)[1] for pid in pids]
held = sum(os.waitstatus_to_exitcode(status) == 0 for status in statuses)
print(f"held {held}, refused {len(pids) - held}, forks refused {forks_refused}")
"""


async def test_eight_children_holding_400_mb_each_stay_within_the_runs_memory(host):
    limits = Limits(wall_seconds=6)
    fence = sandbox_runner.fence(limits, usable_parent())
    # a cgroup also holds the in-memory files and the launcher (memory.max); by count,
    # the processes' address spaces add up to the budget
    budget = sandbox_runner.cgroup_memory_bytes(limits) if fence.cgroup else limits.memory_bytes
    tool = make_python_tool(limits=limits)
    task = asyncio.create_task(
        tool.ainvoke(
            {"type": "tool_call", "id": "c1", "name": "python", "args": {"code": FORK_AND_HOLD}}
        )
    )
    peak = 0
    while not task.done():
        peak = max(peak, await asyncio.to_thread(_code_resident_bytes))
        await asyncio.sleep(0.02)

    message = task.result()  # an answer for the model, not a failure
    counts = [int(word) for word in message.content.replace(",", " ").split() if word.isdigit()]
    held, refused, forks_refused = counts[:3]
    assert held + refused + forks_refused == 8
    assert held * 400 * MB <= limits.memory_bytes  # not 3.2 GB: at most one child's 400 MB
    assert refused + forks_refused >= 7  # the kernel said no, not the clock
    assert peak <= budget, f"{peak // MB} MB resident at once"
    if fence.cgroup is None:
        assert (fence.processes, fence.process_bytes) == (4, 128 * MB)
        assert forks_refused == 8 - fence.processes + 1  # the first process is one of 4


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


def test_a_hybrid_or_v1_host_offers_no_cgroup_and_a_v2_host_names_ours(tmp_path):
    proc_cgroup = tmp_path / "cgroup"
    proc_cgroup.write_text("4:memory:/a\n0::/system.slice/chat.service\n")
    assert own_cgroup(tmp_path, proc_cgroup) is None  # no cgroup.controllers: not cgroup v2

    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    assert own_cgroup(tmp_path, proc_cgroup) == tmp_path / "system.slice/chat.service"


class _FolderCgroup(RunCgroup):
    """A run's cgroup as a plain folder (this host may have no cgroup v2 to give)."""

    async def aremove(self) -> None:
        shutil.rmtree(self.path)


async def test_where_a_cgroup_holds_the_run_bwrap_starts_inside_it(host, tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox_runner, "usable_parent", lambda: tmp_path)
    monkeypatch.setattr(sandbox_runner, "RunCgroup", _FolderCgroup)
    limits = Limits(wall_seconds=5)
    task = asyncio.create_task(run_python("import time\ntime.sleep(0.5)\nprint(2)", limits=limits))
    procs = None
    while procs is None and not task.done():
        procs = next(tmp_path.glob("sandbox-*/cgroup.procs"), None)
        await asyncio.sleep(0.01)
    assert procs is not None
    cgroup = procs.parent
    await asyncio.sleep(0.2)  # the gate (a shell) waits to be in the cgroup, then execs
    started = (Path("/proc") / procs.read_text() / "cmdline").read_bytes().split(b"\0")
    (cgroup / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")

    result = await task

    assert started[0].endswith(b"/bwrap")  # the gate became bwrap, in the cgroup
    assert (result.stdout, result.stopped) == ("2\n", "memory")  # the kernel's oom_kill
    assert result.fence is not None and result.fence.process_bytes == limits.memory_bytes
    assert not cgroup.exists()


# Runs take turns. The code prints when it started and ended (the host's clock: the sandbox
# shares it).
TIMED = "import time\nprint(time.time())\ntime.sleep(0.4)\nprint(time.time())"


def _spans(outputs: list[str]) -> list[tuple[float, float]]:
    return sorted((float(a), float(b)) for a, b in (o.split() for o in outputs))


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = most = 0
    for _, step in edges:  # at the same instant an end comes before a start
        running += step
        most = max(most, running)
    return most


async def test_one_persons_runs_run_one_after_another_and_none_is_refused(host):
    results = await asyncio.gather(
        *(run_python(TIMED, limits=Limits(wall_seconds=5), owner="alice") for _ in range(3))
    )

    assert [(r.exit_code, r.stopped) for r in results] == [(0, None)] * 3
    first, second, third = _spans([r.stdout for r in results])
    assert first[1] <= second[0] and second[1] <= third[0]
    assert run_queue().owners() == 0  # nobody's entry is kept once their runs are done


async def test_a_conversations_calls_take_turns_through_the_tool(host):
    tool = make_python_tool(limits=Limits(wall_seconds=5))
    call = {"type": "tool_call", "id": "c1", "name": "python", "args": {"code": TIMED}}
    config = {"configurable": {"thread_id": "conversation-1"}}

    messages = await asyncio.gather(*(tool.ainvoke(call, config) for _ in range(3)))

    outputs = [m.content.removeprefix("Output:\n") for m in messages]
    assert _most_at_once(_spans(outputs)) == 1


async def test_the_process_runs_a_few_at_once_and_queues_the_rest(host):
    runs = RUNS_AT_ONCE + 2
    results = await asyncio.gather(
        *(run_python(TIMED, limits=Limits(wall_seconds=5), owner=f"u{n}") for n in range(runs))
    )

    assert [(r.exit_code, r.stopped) for r in results] == [(0, None)] * runs
    assert _most_at_once(_spans([r.stdout for r in results])) == RUNS_AT_ONCE


async def test_a_run_whose_turn_never_comes_fails_as_unavailable(sandbox):
    queue = RunQueue(at_once=1)
    async with queue.turn("bob"):
        with pytest.raises(SandboxUnavailable):
            await run_python("print(1)", limits=Limits(queue_seconds=0.2), queue=queue)

    assert queue.owners() == 0
