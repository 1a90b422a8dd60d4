"""Benchmark a cluster losing a process under load; prints one JSON line.

Three Daphne processes behind HAProxy (deploy/haproxy.cfg, ports substituted) on
PostgreSQL and Redis; `--sockets` websockets through the proxy over `--streams`
conversations (the same number on each), one reply streaming in every conversation
(`--tokens` at `--rate` tokens/s from bench/stream_llm.py). `--kill-after` seconds in,
process "a" gets SIGKILL. Every socket reads until its conversation's reply is stored;
a socket that drops reconnects through the proxy and sends `sync`. Then every conversation
sends again. Reported: messages stored before the kill and at the end (lost: rows
missing, or a client whose text differs from the stored one), the reconnect time p50/p99
(drop → `sync.state`), the time until a run on the dead process was announced, and every
error a client saw. The watchdog's window: `--stale` (CHAT_RUN_STALE_SECONDS, 10 s here,
30 s by default), heartbeat 1 s.

`--fault redis-restart` instead: the cluster runs on a `redis-server` of the bench's own
(tests/support/redis_server.py: a free port, no persistence; REDIS_URL is ignored), and
`--kill-after` seconds in it is killed and, `--redis-down` seconds later, started empty on
the same port. The same figures ("stored_before_kill": before Redis went down), plus
"fault", the longest pause between two chunks of one reply on each socket (p50/p99 over
sockets, max; and over the sockets on the process running their reply), the sockets sent
a `sync.state` they did not ask for after the restart, the close codes of dropped sockets,
and the time from the kill of Redis until the first round's last reply was stored.

Needs PostgreSQL, Redis and HAProxy; DATABASE_URL (default .../chatsite_cluster_bench,
created and migrated if missing), REDIS_URL (default db 15). Only 127.0.0.1.

    uv run python bench/cluster.py [--sockets 600] [--streams 100] [--tokens 300] [--rate 20]
        [--fault kill|redis-restart] [--kill-after 5] [--redis-down 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/chatsite_cluster_bench")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")

from bench import cluster_redis, stream
from tests.support.haproxy import start_haproxy

LIMIT = 240.0  # seconds for the whole load; every loop below is bounded by it
NAMES = ("a", "b", "c")


class Client:
    """One socket's view: stored messages by id, each run's text; what went wrong."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self.messages: dict[str, dict] = {}
        self.text: dict[str, str] = {}
        self.synced = True
        self.errors: list[str] = []
        self.reconnects: list[float] = []  # drop → sync.state
        self.handshakes: list[float] = []  # drop → the new socket open
        self.finished_at: dict[str, float] = {}
        self.closes: list[int] = []  # close code of each drop (1006: no close frame)
        self.unasked: list[float] = []  # when a sync.state came that this socket did not ask for
        self.last_run, self.last_chunk = "", 0.0  # the last text: its run, when
        self.longest_pause = 0.0  # between two chunks of one reply (a sync.state's text counts)
        self.served_by = ""  # the process of its first socket (HAProxy's X-Served-By)

    def _chunk(self, run_id: str) -> None:
        now = time.monotonic()
        if run_id == self.last_run:
            self.longest_pause = max(self.longest_pause, now - self.last_chunk)
        self.last_run, self.last_chunk = run_id, now

    def apply(self, frame: dict) -> None:
        kind = frame["type"]
        if kind == "token" or (kind == "sync.state" and frame["generation"]):
            self._chunk(frame["run_id"] if kind == "token" else frame["generation"]["run_id"])
        if kind in ("message.created", "generation.finished"):
            message = self.messages[frame["message"]["id"]] = frame["message"]
            if message["role"] == "assistant":  # created comes first, then finished
                self.finished_at.setdefault(message["id"], time.monotonic())
        elif kind == "sync.state":
            self.synced = True
            for message in frame["messages"]:
                self.messages[message["id"]] = message
            if frame["generation"]:
                self.text[frame["generation"]["run_id"]] = frame["generation"]["text"]
        elif kind == "token" and self.synced:
            text = self.text.get(frame["run_id"], "")
            if frame["index"] != len(text):
                self.errors.append(f"chunk at {frame['index']}, text {len(text)}")
            self.text[frame["run_id"]] = text[: frame["index"]] + frame["text"]
        elif kind == "error":
            self.errors.append(frame.get("code", "error"))

    def replies(self) -> list[dict]:
        return [m for m in self.messages.values() if m["role"] == "assistant"]


async def _session(url: str, headers: dict, client: Client, want: int, deadline: float) -> None:
    """Keep a socket on the conversation until it holds `want` replies; reconnect on drops."""
    dropped_at = None
    while len(client.replies()) < want and time.monotonic() < deadline:
        try:
            async with websockets.connect(url, additional_headers=headers) as ws:
                if dropped_at is not None:
                    client.handshakes.append(time.monotonic() - dropped_at)
                    client.synced = False
                    seq = max((m["sequence_number"] for m in client.messages.values()), default=0)
                    await ws.send(json.dumps({"type": "sync", "after": seq}))
                client.ws = ws  # type: ignore[attr-defined]
                client.served_by = client.served_by or ws.response.headers.get("X-Served-By", "")
                while len(client.replies()) < want:
                    left = deadline - time.monotonic()
                    frame = json.loads(await asyncio.wait_for(ws.recv(), max(left, 0.1)))
                    if frame["type"] == "sync.state" and dropped_at is not None:
                        client.reconnects.append(time.monotonic() - dropped_at)
                        dropped_at = None
                    elif frame["type"] == "sync.state":
                        client.unasked.append(time.monotonic())
                    client.apply(frame)
        except (websockets.ConnectionClosed, OSError, websockets.InvalidStatus) as exc:
            if isinstance(exc, websockets.InvalidStatus):
                client.errors.append(f"handshake {exc.response.status_code}")
            if isinstance(exc, websockets.ConnectionClosed):
                client.closes.append(exc.rcvd.code if exc.rcvd else 1006)
            dropped_at = dropped_at or time.monotonic()
            await asyncio.sleep(0.05)
        except TimeoutError:
            client.errors.append("timed out")
            return
    client.ws = None  # type: ignore[attr-defined]


async def _round(front, headers, clients, senders, want, args, fault=None) -> float | None:
    deadline = time.monotonic() + LIMIT
    url = f"ws://127.0.0.1:{front}/ws/conversations/{{}}/"
    tasks = [
        asyncio.create_task(_session(url.format(c.conversation_id), headers, c, want, deadline))
        for c in clients
    ]
    while any(getattr(c, "ws", None) is None for c in clients):  # every socket connected
        await asyncio.sleep(0.1)
        assert time.monotonic() < deadline
    await asyncio.sleep(1.0)
    for i, sender in enumerate(senders):
        text = f"hello tokens={args.tokens} rate={args.rate} run=r{want}-{i}"
        await sender.ws.send(json.dumps({"type": "message.send", "content": text}))
    killed_at = None
    if fault is not None:  # a coroutine function; answers when the fault happened
        await asyncio.sleep(args.kill_after)
        killed_at = await fault()
    await asyncio.gather(*tasks)
    return killed_at


def _stored(ids: list[str]) -> dict[str, list[tuple]]:
    import psycopg

    query = (
        "SELECT conversation_id::text, id::text, role, content, finish_reason"
        " FROM conversations_message WHERE conversation_id::text = ANY(%s)"
    )
    rows: dict[str, list[tuple]] = {}
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        for row in conn.execute(query, (ids,)).fetchall():
            rows.setdefault(row[0], []).append(row[1:])
    return rows


def _owners(ids: list[str]) -> dict[str, str]:
    import psycopg

    query = (
        "SELECT id::text, owner FROM conversations_replyrun WHERE conversation_id::text = ANY(%s)"
    )
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        return dict(conn.execute(query, (ids,)).fetchall())


def _report(args, ids, clients, before, after, killed_at, victim) -> dict:
    by_id = {mid: content for rows in after.values() for mid, _, content, _ in rows}
    mismatches = sum(
        1
        for c in clients
        for m in c.replies()
        if by_id.get(m["id"]) != m["content"]
        or not by_id.get(m["id"], "").startswith(c.text.get(m["id"], ""))
    )
    interrupted = [
        mid for rows in after.values() for mid, role, _, fr in rows if fr == "interrupted"
    ]
    announced = [
        c.finished_at[mid] - killed_at
        for c in clients
        for mid in interrupted
        if mid in c.finished_at and killed_at is not None
    ]
    reconnects = [r for c in clients for r in c.reconnects]
    handshakes = [r for c in clients for r in c.handshakes]
    owners = _owners(ids)
    elsewhere = [mid for mid in interrupted if f"-{victim}-" not in owners.get(mid, "")]
    stored_after = sum(len(r) for r in after.values())
    return {
        "processes": 3,
        "sockets": args.sockets,
        "streams": args.streams,
        "tokens": args.tokens,
        "rate": args.rate,
        "killed_after_s": args.kill_after,
        "stale_s": args.stale,
        "stored_before_kill": sum(len(r) for r in before.values()),
        "stored_after": stored_after,
        "expected_after": 4 * len(ids),
        "lost": 4 * len(ids) - stored_after + mismatches,
        "interrupted": len(interrupted),
        "interrupted_on_live_processes": len(elsewhere),
        "announced_s": {
            "p50": stream.pct(announced, 0.5) / 1000,
            "p99": stream.pct(announced, 0.99) / 1000,
        }
        if announced
        else None,
        "reconnected": len(reconnects),
        "reconnect_ms": {"p50": stream.pct(reconnects, 0.5), "p99": stream.pct(reconnects, 0.99)}
        if reconnects
        else None,
        "reopened_ms": {"p50": stream.pct(handshakes, 0.5), "p99": stream.pct(handshakes, 0.99)}
        if handshakes
        else None,
        "client_errors": sum(len(c.errors) for c in clients),
        "client_error_kinds": sorted({e.split(" ")[0] for c in clients for e in c.errors}),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sockets", type=int, default=600)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--tokens", type=int, default=300)
    parser.add_argument("--rate", type=int, default=20)
    parser.add_argument("--kill-after", type=float, default=5.0)
    # 5 s took one live run for dead on the loaded 2-core machine (its beat came late).
    parser.add_argument("--stale", type=float, default=10.0)
    parser.add_argument("--fault", choices=("kill", "redis-restart"), default="kill")
    parser.add_argument("--redis-down", type=float, default=2.0)
    args = parser.parse_args()
    restart = args.fault == "redis-restart"
    folder = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    llm_port, front = stream.free_port(), stream.free_port()
    env = {
        **stream.app_env(llm_port),
        "CHAT_RUN_STALE_SECONDS": str(args.stale),
        "CHAT_RUN_HEARTBEAT_SECONDS": "1",
        "CHAT_SYNC_RATE_LIMIT": "100000/m",  # one bench user owns every socket
    }
    redis_port = stream.free_port() if restart else 0
    if restart:  # every process, and this one, on the bench's own Redis
        env["REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    with ExitStack() as stack:
        redis = (
            stack.enter_context(cluster_redis.own_redis(folder, redis_port)) if restart else None
        )
        stream.prepare_database(env)
        _run(args, folder, env, llm_port, front, redis)


def _run(args, folder: Path, env: dict, llm_port: int, front: int, redis) -> None:
    token, ids = stream.make_fixtures(args.streams)
    headers = {"Authorization": f"Bearer {token}"}
    per = args.sockets // args.streams
    clients = [Client(cid) for cid in ids for _ in range(per)]
    # Not every per-th socket: those would all land on one process (round robin by 3).
    senders = [clients[k * per + k % per] for k in range(args.streams)]
    llm = [sys.executable, "bench/stream_llm.py", str(llm_port)]
    ports = {name: stream.free_port() for name in NAMES}
    with stream.serve(llm, llm_port, env, folder / "llm.log"):
        procs = {}
        with ExitStack() as stack:
            for name, port in ports.items():
                cmd = [sys.executable, "-m", "chatsite.serve", "-b", "127.0.0.1", "-p", str(port)]
                procs[name] = stack.enter_context(
                    stream.serve([*cmd, "chatsite.asgi:application"], port, env,
                                 folder / f"daphne-{name}.log")
                )  # fmt: skip
            haproxy = start_haproxy(folder, front, ports)
            stack.callback(haproxy.terminate)
            before: dict = {}
            facts: dict = {"pids": {name: f"-{proc.pid}-" for name, proc in procs.items()}}

            async def kill() -> float:
                before.update(_stored(ids))
                os.kill(procs["a"].pid, signal.SIGKILL)
                return time.monotonic()

            fault = (
                kill
                if redis is None
                else cluster_redis.restarter(redis, before, ids, args, facts, _stored)
            )
            killed_at = asyncio.run(_round(front, headers, clients, senders, 1, args, fault))
            if redis is not None:  # only the first round's replies are stored yet
                facts["last_stored"] = cluster_redis.last_stored(ids)
            asyncio.run(_round(front, headers, clients, senders, 2, args))
            after = _stored(ids)
    victim = procs["a"].pid if redis is None else None
    report = _report(args, ids, clients, before, after, killed_at, victim)
    if redis is not None:
        owners = _owners([c.conversation_id for c in clients])
        extra = cluster_redis.report(args, clients, facts, killed_at, owners)
        report = {"fault": "redis-restart", **report, **extra}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
