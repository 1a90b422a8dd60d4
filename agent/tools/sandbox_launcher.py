"""Run the model's code inside the sandbox: limit, run, stop the rest, hand back images.

Never imported by the app: python_sandbox passes this file's text to the system's
`python3 -I -S -c` inside bubblewrap, with the result pipe's descriptor and a JSON config as
arguments. It writes "+" to that pipe once the sandbox is up, then one JSON object when the
code has ended: its exit code or signal, whether the wall time ran out, and the PNG/JPEG
files it saved in the working directory. Standard library only (it runs on /usr/bin/python3).
"""

import base64
import ctypes
import json
import os
import resource
import select
import signal
import stat
import sys
import time

MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")  # PNG, JPEG
SUFFIXES = (".png", ".jpg", ".jpeg")
MAX_ENTRIES = 2000  # entries looked at for images: a million empty files cost little
PR_SET_DUMPABLE = 4
USER_CODE = ["/usr/bin/python3", "-u", "-s", "/sandbox/main.py"]


def limit(rlimits: dict[str, list[int]]) -> None:
    """Set the limits on this process too: whatever runs here runs under them (never above
    a hard limit the server already had: that cannot be raised)."""
    for name, (soft, hard) in rlimits.items():
        kind = getattr(resource, name)
        ceiling = resource.getrlimit(kind)[1]
        if ceiling != resource.RLIM_INFINITY:
            hard = min(hard, ceiling)
        resource.setrlimit(kind, (min(soft, hard), hard))


def guard() -> None:
    """Make this process non-dumpable: the code runs as the same user, and could otherwise
    ptrace us or write to /proc/1/mem and run without our limits."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")


def run(result_fd: int, wall_seconds: float, process_bytes: int) -> tuple[int | None, bool]:
    """Run the code, each of its processes with `process_bytes` of address space; at the
    wall time kill everything but us; return (wait status, timed out).

    We are the PID namespace's init (bwrap --as-pid-1): signals from inside do not reach us,
    orphans are ours to reap, and when we exit the kernel kills whatever is left."""
    pid = os.fork()
    if pid == 0:
        try:
            os.close(result_fd)
            # the code's alone: the run's budget is its processes' (ours is what we read)
            limit({"RLIMIT_AS": [process_bytes, process_bytes]})
            os.execv(USER_CODE[0], USER_CODE)
        finally:
            os._exit(127)
    pidfd = os.pidfd_open(pid)
    deadline = time.monotonic() + wall_seconds
    status = None
    while status is None and (left := deadline - time.monotonic()) > 0:
        select.select([pidfd], [], [], min(left, 0.1))
        status = reap(pid)
    timed_out = status is None
    kill_the_rest()  # the code, if it ran out of time, and what it left in the background
    return status, timed_out


def reap(pid: int) -> int | None:
    """Reap every finished child (orphans included); return `pid`'s wait status if it ended."""
    status = None
    while True:
        try:
            done, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if done == 0:
            return status
        if done == pid:
            status = code


def kill_the_rest() -> None:
    """Kill and reap every other process in this PID namespace until none is left."""
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return
        time.sleep(0.005)
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break


def images(max_images: int, max_bytes: int) -> tuple[list[dict[str, str]], int]:
    """Return the images saved under the working directory (regular files only, in name
    order) and how many more there were."""
    found: list[dict[str, str]] = []
    left_out = 0
    for path in sorted(image_paths()):
        data = read_image(path, max_bytes)
        if data is None:
            continue
        if len(found) >= max_images:
            left_out += 1
            continue
        found.append({"name": os.path.normpath(path), "data": base64.b64encode(data).decode()})
    return found, left_out


def image_paths() -> list[str]:
    """Return the paths named like images under the working directory, looking at no more
    than MAX_ENTRIES entries (a folder of a million files costs nothing)."""
    paths, folders, seen = [], ["."], 0
    while folders:
        try:
            entries = os.scandir(folders.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > MAX_ENTRIES:
                    return paths
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                elif entry.name.lower().endswith(SUFFIXES):
                    paths.append(entry.path)
    return paths


def read_image(path: str, max_bytes: int) -> bytes | None:
    """Return a regular file's bytes if it is a PNG or JPEG within the size (no symlinks,
    no FIFOs: they could point anywhere or block forever)."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as file:
            data = file.read(max_bytes + 1)
    except OSError:
        return None
    if len(data) > max_bytes or not data.startswith(MAGIC):
        return None
    return data


def main() -> None:
    result_fd = int(sys.argv[1])
    config = json.loads(sys.argv[2])
    guard()
    os.write(result_fd, b"+")
    limit(config["rlimits"])
    status, timed_out = run(result_fd, config["wall_seconds"], config["process_bytes"])
    found, left_out = images(config["max_images"], config["image_bytes"])
    exited = status is not None and os.WIFEXITED(status)
    signalled = status is not None and os.WIFSIGNALED(status)
    report = {
        "exit_code": os.WEXITSTATUS(status) if exited else None,
        "signal": os.WTERMSIG(status) if signalled else None,
        "timed_out": timed_out,
        "images": found,
        "left_out": left_out,
    }
    with os.fdopen(result_fd, "wb") as out:
        out.write(json.dumps(report).encode("ascii"))


if __name__ == "__main__":
    main()
