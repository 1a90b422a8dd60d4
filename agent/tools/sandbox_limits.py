"""What one sandbox run may use, and how its memory is held to its budget as a whole."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

KB = 1024
MB = 1024 * KB
# The launcher and bwrap's own processes, charged to a run's cgroup beside the code's memory
# (measured: bwrap 2 MB, the launcher 11 MB resident, more while it reads the images).
OVERHEAD_BYTES = 64 * MB


@dataclass(frozen=True)
class Limits:
    """What one run may use."""

    wall_seconds: float = 10.0
    cpu_seconds: int = 10
    memory_bytes: int = 512 * MB  # the whole run: all its processes together
    processes: int = 32  # processes and threads at once, the code's first one included
    # without a cgroup, processes are counted instead: at most this many, each with
    # memory_bytes / counted_processes of address space (4 × 128 MB)
    counted_processes: int = 4
    file_bytes: int = 16 * MB  # largest file it may write
    open_files: int = 64
    output_bytes: int = 64 * KB  # of stdout, and of stderr
    work_dir_bytes: int = 64 * MB  # the working directory (a tmpfs, in memory)
    tmp_bytes: int = 16 * MB  # /tmp, and /dev/shm
    max_images: int = 4
    image_bytes: int = 2 * MB
    code_bytes: int = 100 * KB
    queue_seconds: float = 60.0  # the longest a run waits for its turn before it fails


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Fence:
    """How a run is held to `Limits.memory_bytes` as a whole."""

    processes: int  # processes and threads at once, the code's first one included
    process_bytes: int  # address space of each
    cgroup: Path | None  # the parent of the run's own cgroup; None: held by count


def fence(limits: Limits, cgroup_parent: Path | None) -> Fence:
    """Return the run's fence: a cgroup holding the total where there is one, else few
    enough processes that their address spaces together stay within the budget."""
    if cgroup_parent is not None:
        return Fence(limits.processes, limits.memory_bytes, cgroup_parent)
    processes = max(1, min(limits.processes, limits.counted_processes))
    return Fence(processes, limits.memory_bytes // processes, None)


def cgroup_memory_bytes(limits: Limits) -> int:
    """Return a run's memory.max: the code's budget, and what is charged to the cgroup
    besides (its in-memory files, the launcher and bwrap), so neither eats the other's."""
    files = limits.work_dir_bytes + 2 * limits.tmp_bytes
    return limits.memory_bytes + files + OVERHEAD_BYTES
