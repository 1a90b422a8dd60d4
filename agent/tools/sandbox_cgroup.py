"""Hold a sandbox run's memory as a whole: a cgroup v2 of its own, where the host allows one.

An address-space limit binds each process alone; only a cgroup sees a run's processes
together. We need a cgroup v2 mounted at /sys/fs/cgroup whose memory and pids controllers
we may hand to children we make: the server's own cgroup (the real root, or one delegated
with nothing else inside), or its parent (a server started in a leaf of the cgroup
delegated to it, as systemd's `DelegateSubgroup=` does). `usable_parent()` checks once by
making and removing a child. Elsewhere (cgroup v1 or hybrid hosts, a container without a
delegated cgroup) there is none, and the runner counts processes instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import uuid
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids")
REMOVE_SECONDS = 2.0  # a killed run's processes leave its cgroup within moments


@functools.lru_cache(maxsize=1)
def usable_parent() -> Path | None:
    """Return the cgroup under which each run may have its own, or None (cached)."""
    own = own_cgroup(CGROUP_ROOT, Path("/proc/self/cgroup"))
    if own is None:
        return None
    # never the host's root cgroup for a parent: only our own or the one delegated above it
    candidates = [own] if own.parent == CGROUP_ROOT or own == CGROUP_ROOT else [own, own.parent]
    return next((parent for parent in candidates if _can_hold_runs(parent)), None)


def own_cgroup(root: Path, proc_cgroup: Path) -> Path | None:
    """Return this process's cgroup v2 directory, or None when `root` is not a cgroup v2
    mount (cgroup v1, or a hybrid host whose memory controller is v1's)."""
    if not (root / "cgroup.controllers").is_file():
        return None
    with contextlib.suppress(OSError):
        for line in proc_cgroup.read_text().splitlines():
            if line.startswith("0::"):
                return root / line[3:].strip("/")
    return None


def _can_hold_runs(parent: Path) -> bool:
    """Return whether children of `parent` get the memory and pids controllers (enabling
    them if we may) and whether we can make and remove one."""
    try:
        if not set(CONTROLLERS) <= set((parent / "cgroup.controllers").read_text().split()):
            return False
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        if not set(CONTROLLERS) <= enabled:
            # EBUSY when processes live in `parent` itself (cgroup v2: no internal processes)
            (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in CONTROLLERS))
        probe = parent / f"sandbox-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        probe.mkdir()
        try:
            (probe / "memory.max").write_text("max")
            (probe / "pids.max").write_text("max")
        finally:
            probe.rmdir()
    except OSError:
        return False
    return True


class RunCgroup:
    """One run's cgroup: its memory and process limits, the processes put in it, and
    what the kernel did to them."""

    def __init__(self, parent: Path) -> None:
        self.path = parent / f"sandbox-{uuid.uuid4().hex}"

    def create(self, *, memory_bytes: int, processes: int) -> None:
        """Make the cgroup with these limits (no swap: memory.max would not bound it)."""
        self.path.mkdir()
        try:
            (self.path / "memory.max").write_text(str(memory_bytes))
            with contextlib.suppress(FileNotFoundError):  # a kernel without swap accounting
                (self.path / "memory.swap.max").write_text("0")
            (self.path / "pids.max").write_text(str(processes))
        except BaseException:
            self.path.rmdir()
            raise

    def add(self, pid: int) -> None:
        """Move a process into the cgroup (before it starts any other: they follow it)."""
        (self.path / "cgroup.procs").write_text(str(pid))

    def out_of_memory(self) -> bool:
        """Return whether the kernel killed a process of the run for the cgroup's memory."""
        try:
            events = (self.path / "memory.events").read_text().split()
        except OSError:
            return False
        counts = dict(zip(events[::2], events[1::2], strict=False))
        return int(counts.get("oom_kill", "0")) > 0

    async def aremove(self) -> None:
        """Kill whatever is left in the cgroup and remove it (waiting for it to empty)."""
        with contextlib.suppress(OSError):  # cgroup.kill: Linux 5.14
            (self.path / "cgroup.kill").write_text("1")
        deadline = asyncio.get_running_loop().time() + REMOVE_SECONDS
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(0.02)
