"""The redis-restart fault of bench/cluster.py: the cluster's own Redis, killed and started
empty under load, and the figures that fault adds to the report."""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import contextmanager
from pathlib import Path

from bench import stream

MARKER = "bench:before-restart"  # set before Redis is killed: gone after, or it was no restart


def last_stored(ids: list[str]) -> float | None:
    """Return when (epoch seconds) the conversations' latest reply was stored."""
    import psycopg

    query = (
        "SELECT extract(epoch FROM max(created_at))::float FROM conversations_message"
        " WHERE role = 'assistant' AND conversation_id::text = ANY(%s)"
    )
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        return conn.execute(query, (ids,)).fetchone()[0]


@contextmanager
def own_redis(folder: Path, port: int):
    """Run the cluster's redis-server (no persistence) on `port`; always stop it."""
    # Imports Django's settings (tests/support/daphne.py): REDIS_URL must name `port` by then.
    from tests.support.redis_server import RedisServer

    (folder / "redis").mkdir()
    redis = RedisServer(folder / "redis")
    redis.port, redis.url = port, f"redis://127.0.0.1:{port}/0"  # the port chosen before
    try:
        yield redis.start()
    finally:
        redis.stop()


def restarter(redis, before: dict, ids: list[str], args, facts: dict, stored):
    """Return the redis-restart fault: note what is stored, kill Redis, start it empty."""
    from redis import Redis

    def probe(command: str, *values: str):
        with Redis.from_url(redis.url, socket_timeout=5) as client:  # a new connection
            return getattr(client, command)(MARKER, *values)

    async def restart() -> float:
        # In threads: the sockets' reading (and their pauses) must not wait for these.
        before.update(await asyncio.to_thread(stored, ids))
        await asyncio.to_thread(probe, "set", "1")
        restarted_at, facts["restarted_wall"] = time.monotonic(), time.time()
        await asyncio.to_thread(redis.stop)
        await asyncio.sleep(args.redis_down)
        await asyncio.to_thread(redis.start)
        facts["empty_after"] = await asyncio.to_thread(probe, "get") is None
        return restarted_at

    return restart


def report(args, clients: list, facts: dict, restarted_at: float, owners: dict) -> dict:
    """The redis-restart figures (bench/cluster.py's docstring names them)."""
    pauses = [c.longest_pause for c in clients]
    # Sockets on the process running their first reply: it streams on through the outage.
    pids = facts["pids"]
    own = [
        c.longest_pause
        for c in clients
        if c.replies()
        and pids.get(c.served_by.removesuffix("-open"), "?") in owners.get(c.replies()[0]["id"], "")
    ]
    closes = [code for c in clients for code in c.closes]
    last = facts["last_stored"]
    return {
        "redis_down_s": args.redis_down,
        "redis_empty_after_restart": facts["empty_after"],
        "longest_pause_ms": {
            "p50": stream.pct(pauses, 0.5),
            "p99": stream.pct(pauses, 0.99),
            "max": round(max(pauses) * 1000, 1),
        },
        "longest_pause_ms_on_reply_process": (
            {"p50": stream.pct(own, 0.5), "max": stream.pct(own, 1), "sockets": len(own)}
            if own
            else None
        ),
        "unasked_sync_after_restart": sum(
            1 for c in clients if any(t > restarted_at for t in c.unasked)
        ),
        "closed": {str(code): closes.count(code) for code in sorted(set(closes))},
        "all_stored_after_restart_s": round(last - facts["restarted_wall"], 2) if last else None,
    }
