"""deploy/haproxy.cfg with its ports replaced, run as a process (tests/cluster, bench/cluster.py).

No Django here: the benchmark imports it too.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "haproxy.cfg"
SHIPPED_FRONT = "bind 127.0.0.1:8000"
SHIPPED_PORTS = {"a": 8001, "b": 8002, "c": 8003}


def haproxy_binary() -> str | None:
    """Return HAProxy's path (Debian puts it in /usr/sbin), or None."""
    found = shutil.which("haproxy")
    return found or ("/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy") else None)


def render_config(front_port: int, ports: dict[str, int]) -> str:
    """Return deploy/haproxy.cfg with its listening port and its servers' ports replaced."""
    text = CONFIG.read_text()
    assert text.count(SHIPPED_FRONT) == 1, "the shipped config's bind line changed"
    text = text.replace(SHIPPED_FRONT, f"bind 127.0.0.1:{front_port}")
    for name, shipped in SHIPPED_PORTS.items():
        pattern = rf"127\.0\.0\.1:{shipped}\b"
        assert len(re.findall(pattern, text)) == 2, f"server {name}: a line and its backup"
        text = re.sub(pattern, f"127.0.0.1:{ports[name]}", text)
    return text


def start_haproxy(folder: Path, front: int, ports: dict[str, int]) -> subprocess.Popen:
    """Check and start HAProxy on `front` for the processes on `ports`; log in `folder`."""
    config = folder / "haproxy.cfg"
    config.write_text(render_config(front, ports))
    binary = haproxy_binary()
    assert binary is not None, "HAProxy is not installed (apt-get install haproxy)"
    check = subprocess.run([binary, "-c", "-f", str(config)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    with open(folder / "haproxy.log", "w") as out:
        proc = subprocess.Popen([binary, "-db", "-f", str(config)], stdout=out, stderr=out)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"haproxy exited with {proc.returncode}: see {folder}/haproxy.log")
        try:
            with socket.create_connection(("127.0.0.1", front), timeout=0.5):
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise TimeoutError("haproxy did not start")
