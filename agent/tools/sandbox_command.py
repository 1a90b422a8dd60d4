"""The sandbox's command line: bubblewrap's options (namespaces, the whole file system the
code sees), the launcher that is its init, and how bwrap itself is started
(agent/tools/sandbox_runner.py runs it)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agent.tools.sandbox_limits import Fence, Limits

SYSTEM_PYTHON = "/usr/bin/python3"  # never the app's venv: nothing of the app inside
WORK_DIR = "/home/sandbox"
NOBODY = 65534  # who runs bwrap when the server is root: RLIMIT_NPROC spares root
# In cgroup mode bwrap starts behind this gate: it waits on stdin until the server has put
# it in the run's cgroup, so every process of the run starts inside.
GATE = ["/bin/sh", "-c", 'read -r _ && exec "$@" </dev/null', "sandbox-gate"]
HOST_ENV = {"PATH": "/usr/bin:/bin"}  # bwrap gets nothing of the server's environment
SANDBOX_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": WORK_DIR,
    "LANG": "C.UTF-8",
    "TMPDIR": "/tmp",
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": "/tmp/matplotlib",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}
LAUNCHER = (Path(__file__).with_name("sandbox_launcher.py")).read_text(encoding="utf-8")


def code_file(source: bytes) -> int:
    """Return a memory file holding the code, for bwrap to copy into /sandbox/main.py."""
    fd = os.memfd_create("main.py", os.MFD_CLOEXEC)
    os.write(fd, source)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def bwrap_options(limits: Limits, *, code_fd: int = 0) -> list[str]:
    """Return bwrap's options: the namespaces and the sandbox's whole file system, with the
    code read from `code_fd` into /sandbox/main.py."""
    env = [arg for name, value in SANDBOX_ENV.items() for arg in ("--setenv", name, value)]
    return [
        *("--unshare-all", "--unshare-user", "--disable-userns"),
        *("--uid", str(NOBODY), "--gid", str(NOBODY), "--hostname", "sandbox"),
        *("--as-pid-1", "--die-with-parent", "--new-session", "--clearenv", *env),
        *("--ro-bind", "/usr", "/usr"),
        *("--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64"),
        *("--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin"),
        *("--proc", "/proc", "--dev", "/dev"),
        *("--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm"),
        *("--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"),
        *("--size", str(limits.work_dir_bytes), "--tmpfs", WORK_DIR),
        *("--file", str(code_fd), "/sandbox/main.py"),
        *("--remount-ro", "/dev", "--remount-ro", "/", "--chdir", WORK_DIR),
    ]


def launcher_command(result_fd: int, limits: Limits, fence: Fence) -> list[str]:
    cpu = limits.cpu_seconds
    config = {
        "wall_seconds": limits.wall_seconds,
        "max_images": limits.max_images,
        "image_bytes": limits.image_bytes,
        # the code's processes only: the launcher's own memory is bounded by what it reads
        "process_bytes": fence.process_bytes,
        "rlimits": {
            "RLIMIT_CPU": [cpu, cpu + 1],  # SIGXCPU at the limit, SIGKILL a second later
            # counted per sandbox (its own user namespace), the launcher included
            "RLIMIT_NPROC": [fence.processes + 1] * 2,
            "RLIMIT_FSIZE": [limits.file_bytes] * 2,
            "RLIMIT_NOFILE": [limits.open_files] * 2,
            "RLIMIT_CORE": [0, 0],
        },
    }
    return [SYSTEM_PYTHON, "-I", "-S", "-c", LAUNCHER, str(result_fd), json.dumps(config)]


def process_options() -> dict[str, Any]:
    """Return how bwrap is started: its own process group, no environment, from /, and
    as nobody when the server is root (root's processes are never counted against
    RLIMIT_NPROC, so a fork bomb would not stop)."""
    options: dict[str, Any] = {"env": HOST_ENV, "cwd": "/", "start_new_session": True}
    if os.geteuid() == 0:
        options |= {"user": NOBODY, "group": NOBODY, "extra_groups": []}
    return options
