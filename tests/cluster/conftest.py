"""A cluster as deployed: three Daphne processes behind HAProxy running deploy/haproxy.cfg.

Each process reaches PostgreSQL through a TCP proxy of its own, so a test can take the
database away from all of them (and count, per process, the connections PostgreSQL
sees). Redis is a `redis-server` of the cluster's own, without persistence, so a test
can restart it and it comes back empty, as a production Redis would. The model is the
fake OpenAI server: a message containing "slowly" gets a reply of several seconds, any
other a short one.
"""

from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from tests.conftest import require_service, uses_postgres
from tests.support.daphne import database_url, free_port, start_daphnes, stop
from tests.support.fake_openai import FakeOpenAI
from tests.support.haproxy import haproxy_binary, start_haproxy
from tests.support.openai_replies import Reply, default_responder, forced_tool, message_texts
from tests.support.redis_server import RedisServer, redis_available
from tests.support.tcp_proxy import TcpProxy

NAMES = ("a", "b", "c")
# The watchdog's window, shortened so a dead process's reply is finished within seconds.
STALE_SECONDS = 2.0
HEARTBEAT_SECONDS = 0.5
# Well below what fifty people at once would otherwise open, so that the ceiling is reached
# (20 was reached until a chunk's append and its sends went together: 18 then, in one run).
REDIS_MAX_CONNECTIONS = 12
LONG_REPLY = " ".join(f"word{i}" for i in range(400))  # ~2,700 characters
SLOW_CHARS_PER_SECOND = 300  # ~9 s: long enough to kill its process in the middle


def _responder(body):
    if forced_tool(body) is not None:
        return default_responder(body)
    if "slowly" in (message_texts(body, "user") or [""])[-1]:
        return Reply(text=LONG_REPLY, chars_per_second=SLOW_CHARS_PER_SECOND, chunk_chars=6)
    return Reply(text="A short answer, streamed in a few chunks.", chunk_chars=8)


@dataclass
class Node:
    name: str
    proc: subprocess.Popen
    port: int
    database: TcpProxy

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


@dataclass
class Cluster:
    url: str  # HAProxy's front
    nodes: list[Node]
    model: FakeOpenAI
    redis: RedisServer  # the cluster's own: every process's REDIS_URL is `redis.url`
    haproxy_log: Path
    logs: Path
    killed: list[str] = field(default_factory=list)

    def node_of(self, process_id: str) -> Node:
        """Return the node whose PROCESS_ID (host-pid-random) is `process_id`."""
        pid = int(process_id.rsplit("-", 2)[1])
        return next(n for n in self.nodes if n.proc.pid == pid)

    def alive(self) -> list[Node]:
        return [n for n in self.nodes if n.alive]


def _wait_healthy(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError("the cluster did not answer /healthz through HAProxy")


@pytest.fixture(scope="package")
def cluster(django_db_setup, django_db_blocker, tmp_path_factory):
    """Three Daphne processes (production settings) behind HAProxy, for this folder's tests.

    Stopped after them: their watchdogs would otherwise store other tests' runs (with old
    heartbeats) as interrupted."""
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    require_service(redis_available(), "redis-server")
    require_service(haproxy_binary() is not None, "HAProxy (apt-get install haproxy)")
    tmp_path = tmp_path_factory.mktemp("cluster")
    with django_db_blocker.unblock():
        direct = database_url()
    db = settings.DATABASES["default"]
    host_port = direct.split("@", 1)[1].split("/", 1)[0]
    (tmp_path / "redis").mkdir()
    redis = RedisServer(tmp_path / "redis").start()
    model = FakeOpenAI(_responder).start()
    target = (db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432))
    proxies = {name: TcpProxy(target).start() for name in NAMES}
    procs, ports = {}, {}

    def spawn(name: str) -> None:  # the three start side by side, each on its own proxy
        (tmp_path / name).mkdir()
        url = direct.replace(host_port, f"127.0.0.1:{proxies[name].port}")
        procs[name], [ports[name]] = _spawn(tmp_path / name, model, url, redis.url)

    try:
        with ThreadPoolExecutor(len(NAMES)) as pool:
            for future in [pool.submit(spawn, name) for name in NAMES]:
                future.result()
        front = free_port()
        haproxy = start_haproxy(tmp_path, front, ports)
    except BaseException:
        stop(list(procs.values()))
        model.stop()
        redis.stop()
        for proxy in proxies.values():
            proxy.stop()
        raise
    nodes = [Node(n, procs[n], ports[n], proxies[n]) for n in NAMES]
    url = f"http://127.0.0.1:{front}"
    try:
        _wait_healthy(url)
        yield Cluster(url, nodes, model, redis, tmp_path / "haproxy.log", tmp_path)
    finally:
        stop([haproxy, *procs.values()])
        model.stop()
        redis.stop()
        for proxy in proxies.values():
            proxy.stop()


def _spawn(
    var: Path, model: FakeOpenAI, url: str, redis_url: str
) -> tuple[subprocess.Popen, list[int]]:
    procs, ports = start_daphnes(
        var,
        model.base_url,
        redis_url,
        count=1,
        DATABASE_URL=url,
        CHECKPOINT_URL=url,
        DJANGO_DEBUG="0",
        DJANGO_SECURE_SSL_REDIRECT="0",
        CHAT_RUN_STALE_SECONDS=str(STALE_SECONDS),
        CHAT_RUN_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS),
        REDIS_MAX_CONNECTIONS=str(REDIS_MAX_CONNECTIONS),
    )
    return procs[0], ports


def tcp_ports(pid: int, remote_port: int) -> set[int]:
    """Return the local ports of process `pid`'s established TCP connections to `remote_port`."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if link.startswith("socket:["):
            inodes.add(link[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in rows.readlines()[1:]:
                fields = row.split()
                local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
                established = state == "01"
                if inode in inodes and established and _port(remote) == remote_port:
                    ports.add(_port(local))
    return ports


def _port(address: str) -> int:
    return int(address.rsplit(":", 1)[1], 16)  # /proc/net/tcp: hex address:port
