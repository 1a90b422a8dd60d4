"""Run Python code with the system's python3 inside bubblewrap (Debian's `bubblewrap`).

The sandbox has no network (its own empty network namespace), sees a read-only /usr and
nothing else of the host (no /etc, no /root, no app directory, no environment), runs as an
unprivileged user in its own user, PID, IPC, UTS and cgroup namespaces, and writes only to
small tmpfs mounts that vanish with it: the working directory, /tmp and /dev/shm.

Inside, sandbox_launcher.py is the PID namespace's init: the code cannot signal or trace it.
It sets the limits (CPU seconds, address space, processes - counted per sandbox, since the
user namespace is new and its user is not root -, file size, open files), runs the code,
kills everything at the wall time and reports back with the images. Here the wall time is
kept again, and stdout and stderr are each read up to a cap: past it, the sandbox is killed.

Memory is the run's as a whole (`Limits.memory_bytes`, its `Fence`): where the host allows,
the run has a cgroup of its own (sandbox_cgroup.py) whose memory.max holds all its processes
together; elsewhere it may have only a few processes, each with a share of the budget as its
address space. Runs wait their turn in the queue (sandbox_queue.py) before they start.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from agent.tools.sandbox_cgroup import RunCgroup, usable_parent
from agent.tools.sandbox_command import (
    GATE,
    SYSTEM_PYTHON,
    bwrap_options,
    code_file,
    launcher_command,
    process_options,
)
from agent.tools.sandbox_limits import (
    DEFAULT_LIMITS,
    KB,
    MB,
    Fence,
    Limits,
    cgroup_memory_bytes,
    fence,
)
from agent.tools.sandbox_queue import RunQueue, run_queue
from agent.tools.sandbox_report import Image, StopReason, parse_report, stop_reason, valid_images

logger = logging.getLogger(__name__)

BWRAP = "bwrap"  # looked up on PATH (Debian's `bubblewrap` package)
GRACE_SECONDS = 3.0  # past the wall time: the launcher's own kill and image collection
DRAIN_SECONDS = 2.0  # reading what is left in the pipes once the sandbox has ended
PROCESSES_OF_OURS = 4  # in a run's cgroup: bwrap and the launcher, and room to spare


@dataclass(frozen=True)
class RunResult:
    """How a run ended: its output (capped), its exit code or what stopped it, its images."""

    stdout: str
    stderr: str
    exit_code: int | None
    stopped: StopReason | None
    images: tuple[Image, ...] = ()
    images_left_out: int = 0
    signal: int | None = None
    seconds: float = 0.0
    fence: Fence | None = None  # how its memory was held


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing, or the sandbox could not start on this machine."""


class CodeTooLong(ValueError):
    """The code is longer than `Limits.code_bytes`."""


@functools.lru_cache(maxsize=1)
def sandbox_available() -> bool:
    """Return whether bwrap is installed and starts this module's sandbox, with the same
    options (cached: the first call starts a sandbox and blocks for a moment, so make it at
    startup rather than on the event loop)."""
    bwrap = shutil.which(BWRAP)
    if bwrap is None:
        return False
    # the code file is stdin here: empty
    argv = [bwrap, *bwrap_options(DEFAULT_LIMITS), SYSTEM_PYTHON, "-I", "-S", "-c", "print('ok')"]
    try:
        done = subprocess.run(argv, input=b"", capture_output=True, timeout=20, **process_options())
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip() == b"ok"


async def run_python(
    code: str,
    *,
    limits: Limits = DEFAULT_LIMITS,
    owner: str | None = None,
    queue: RunQueue | None = None,
) -> RunResult:
    """Run `code` in a fresh sandbox once its turn comes (`owner`'s runs take turns; the
    queue is this process's unless given) and return how it ended; a limit it reached is a
    result, not an exception. Raises CodeTooLong, or SandboxUnavailable when the sandbox
    cannot start or its turn did not come within `limits.queue_seconds`.
    """
    source = code.encode("utf-8", "replace")
    if len(source) > limits.code_bytes:
        raise CodeTooLong(f"the code is longer than {limits.code_bytes} bytes")
    bwrap = shutil.which(BWRAP)
    if bwrap is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed")
    async with _turn(queue or run_queue(), owner, limits.queue_seconds):
        run = _Run(limits, fence(limits, usable_parent()))
        try:
            await run.start(bwrap, source)
            return await run.finish()
        finally:
            await run.aclose()


@contextlib.asynccontextmanager
async def _turn(queue: RunQueue, owner: str | None, seconds: float) -> AsyncIterator[None]:
    """Wait for the run's turn in `queue` (at most `seconds`) and hold it."""
    async with contextlib.AsyncExitStack() as stack:
        try:
            async with asyncio.timeout(seconds):
                await stack.enter_async_context(queue.turn(owner))
        except TimeoutError:
            raise SandboxUnavailable(f"no turn to run came within {seconds:g} s") from None
        yield


class _Capped:
    """What a pipe delivered, up to `cap` bytes; past it, `over` is called once and the rest
    is read and dropped (so the pipe reaches its end and closes)."""

    def __init__(self, cap: int, over: Callable[[], None]) -> None:
        self.data = bytearray()
        self.cut = False
        self._cap = cap
        self._over = over

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(64 * KB):
            if self.cut:
                continue
            room = self._cap - len(self.data)
            self.data += chunk[:room]
            if len(chunk) > room:
                self.cut = True
                self._over()


class _Run:
    """One sandbox from start to end: read its pipes capped, enforce the wall time."""

    def __init__(self, limits: Limits, fence: Fence) -> None:
        self.limits = limits
        self.fence = fence
        self.cgroup = RunCgroup(fence.cgroup) if fence.cgroup is not None else None
        self.process: asyncio.subprocess.Process | None = None
        self.read_fds: list[int] = []  # stdout, stderr, the launcher's report
        self.stdout = _Capped(limits.output_bytes, self.kill)
        self.stderr = _Capped(limits.output_bytes, self.kill)
        # base64 images and a little JSON; anything longer is not the launcher's report
        images_bytes = limits.max_images * (limits.image_bytes * 4 // 3 + KB)
        self.report = _Capped(images_bytes + MB, self.kill)
        self.started = time.monotonic()

    async def start(self, bwrap: str, source: bytes) -> None:
        """Start bwrap with the code in a memory file and three pipes to read (in its own
        cgroup, when the run has one)."""
        if self.cgroup is not None:
            self._create_cgroup()
        with contextlib.ExitStack() as ours_to_close:  # the child keeps its own copies
            code_fd = code_file(source)
            ours_to_close.callback(os.close, code_fd)
            write_fds = []
            for _ in range(3):
                read_fd, write_fd = os.pipe()
                self.read_fds.append(read_fd)
                ours_to_close.callback(os.close, write_fd)
                write_fds.append(write_fd)
            gated = self.cgroup is not None
            try:
                self.process = await asyncio.create_subprocess_exec(
                    *(GATE if gated else []),
                    bwrap,
                    *bwrap_options(self.limits, code_fd=code_fd),
                    *launcher_command(write_fds[2], self.limits, self.fence),
                    stdin=asyncio.subprocess.PIPE if gated else asyncio.subprocess.DEVNULL,
                    stdout=write_fds[0],
                    stderr=write_fds[1],
                    pass_fds=(code_fd, write_fds[2]),
                    **process_options(),
                )
            except BaseException as exc:
                for fd in self.read_fds:
                    os.close(fd)
                if isinstance(exc, OSError):
                    raise SandboxUnavailable(f"bwrap could not start: {exc}") from exc
                raise
        if gated:
            await self._open_gate()

    def _create_cgroup(self) -> None:
        """Make the run's cgroup, for the code's processes, bwrap's and the launcher."""
        assert self.cgroup is not None
        try:
            self.cgroup.create(
                memory_bytes=cgroup_memory_bytes(self.limits),
                processes=self.fence.processes + PROCESSES_OF_OURS,
            )
        except OSError as exc:
            self.cgroup = None
            raise SandboxUnavailable(f"the run's cgroup could not be made: {exc}") from exc

    async def _open_gate(self) -> None:
        """Put the waiting gate (bwrap to be) in the run's cgroup, then let it go on."""
        assert self.cgroup is not None and self.process is not None
        stdin = self.process.stdin
        assert stdin is not None
        try:
            self.cgroup.add(self.process.pid)
            stdin.write(b"go\n")
            await stdin.drain()
        except (OSError, ConnectionError) as exc:
            self.kill()
            for fd in self.read_fds:
                os.close(fd)
            self.read_fds = []
            await self.process.wait()
            raise SandboxUnavailable(f"the run could not enter its cgroup: {exc}") from exc
        finally:
            stdin.close()

    async def aclose(self) -> None:
        """Remove the run's cgroup, killing whatever is left in it."""
        if self.cgroup is None:
            return
        try:
            await self.cgroup.aremove()
        except OSError as exc:
            logger.warning("could not remove the sandbox cgroup %s: %s", self.cgroup.path, exc)

    def kill(self) -> None:
        """Kill bwrap; its sandbox dies with it (--die-with-parent kills the launcher, the
        PID namespace's init, and the kernel then every process in the namespace)."""
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)

    async def finish(self) -> RunResult:
        """Read the pipes until the sandbox ends (killing it at the wall time), then
        return its result."""
        process = self.process
        assert process is not None, "start() first"
        loop = asyncio.get_running_loop()
        transports, tasks = [], []
        for fd, capped in zip(self.read_fds, (self.stdout, self.stderr, self.report), strict=True):
            reader = asyncio.StreamReader(limit=64 * KB, loop=loop)
            transport, _ = await loop.connect_read_pipe(
                lambda reader=reader: asyncio.StreamReaderProtocol(reader, loop=loop),
                os.fdopen(fd, "rb", buffering=0),
            )
            transports.append(transport)
            tasks.append(asyncio.create_task(capped.drain(reader)))
        timed_out = False
        try:
            try:
                await asyncio.wait_for(process.wait(), self.limits.wall_seconds + GRACE_SECONDS)
            except TimeoutError:
                timed_out = True
            self.kill()
            await asyncio.wait(tasks, timeout=DRAIN_SECONDS)
        finally:
            self.kill()  # also when the caller is cancelled
            for task in tasks:
                task.cancel()
            for transport in transports:
                transport.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), DRAIN_SECONDS)
        return self._result(timed_out)

    def _result(self, host_timed_out: bool) -> RunResult:
        report = parse_report(bytes(self.report.data), self.report.cut)
        if report is None:
            raise SandboxUnavailable(
                "the sandbox did not start: " + self.stderr.data.decode("utf-8", "replace")[:500]
            )
        stderr = self.stderr.data.decode("utf-8", "replace")
        signal_number = report.get("signal")
        stopped = stop_reason(
            output_cut=self.stdout.cut or self.stderr.cut,
            timed_out=host_timed_out or report.get("timed_out") is True,
            signal_number=signal_number,
            finished="exit_code" in report or signal_number is not None,
            stderr=stderr,
        )
        if self.cgroup is not None and self.cgroup.out_of_memory() and stopped != "output_limit":
            stopped = "memory"  # the kernel killed one of its processes at memory.max
        images, left_out = valid_images(report, self.limits)
        return RunResult(
            stdout=_text(self.stdout),
            stderr=_text(self.stderr),
            exit_code=report.get("exit_code"),
            stopped=stopped,
            images=images,
            images_left_out=left_out,
            signal=signal_number,
            seconds=round(time.monotonic() - self.started, 3),
            fence=self.fence,
        )


def _text(output: _Capped) -> str:
    text = output.data.decode("utf-8", "replace")
    if output.cut:
        text += f"\n[cut: more than {len(output.data) // KB} KB]"
    return text
