"""A soak from outside (issue 59 item 4): sockets sending back to back for many minutes.

One Daphne process on PostgreSQL (a database made afresh each run) + Redis, as `bin/run`
serves the app; the paced fake model
(bench/stream_llm.py). `--sockets` (20) clients, each on a conversation of its own, send a
message, wait for its `generation.finished`, and send the next at once, for `--minutes`
(25), so each conversation grows to over a thousand turns. Each reply is `--tokens` (20)
tokens at `--rate` (200) tokens/s. Prints one JSON line: replies per minute (each minute,
and the means of the first and last five), reply time p50 (send → generation.finished)
over the first and last five minutes, the server's RSS at the first minute's end and at
the end, errors (an `error` frame, a reply stored as failed, a socket closed), and the
turns each conversation reached. The targets: throughput in the last five minutes within
10% of the first five (`throughput_flat`), no errors.

This machine's PostgreSQL runs with autovacuum off (as the CI image does): there a
conversation's row, its runs and its checkpoints pile up dead versions by the tens of
thousands, and the soak measures that bloat, not the app. So the bench runs
`VACUUM (ANALYZE)` on its database every `--vacuum-every` seconds (60, autovacuum's
default naptime; 0: never), as a server with autovacuum on does by itself.

    uv run python bench/soak.py [--minutes 25] [--sockets 20] [--tokens 20] [--rate 200]
        [--vacuum-every 60]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/chatsite_soak")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/11")

from bench import stream  # noqa: E402
from bench.processes import daphne_command, free_port, rss_mb, serve  # noqa: E402

stream.DATABASE_URL = os.environ["DATABASE_URL"]  # app_env and prepare_database read these
stream.REDIS_URL = os.environ["REDIS_URL"]


async def one_socket(url: str, headers: dict, ask: str, until: float, out: dict) -> None:
    """Send back to back on one conversation until `until`; note each reply's end time,
    its duration and any fault."""
    try:
        async with websockets.connect(url, additional_headers=headers, max_size=None) as ws:
            n = 0
            while time.monotonic() < until:
                n += 1
                sent = time.monotonic()
                await ws.send(json.dumps({"type": "message.send", "content": f"{ask} n={n}"}))
                while True:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), 120))
                    if frame["type"] == "error":
                        out["errors"].append(frame.get("code", "error"))
                        break
                    if frame["type"] == "generation.finished":
                        if frame["message"].get("finish_reason") == "error":
                            out["errors"].append("stored as failed")
                        break
                now = time.monotonic()
                out["replies"].append((now, now - sent))
            out["turns"].append(n)
    except (websockets.ConnectionClosed, TimeoutError, OSError) as exc:
        out["errors"].append(f"socket: {type(exc).__name__}")


def fresh_database() -> None:
    """Drop the soak's database: what an earlier run left would count as this run's bloat
    (`stream.prepare_database` creates and migrates it again)."""
    import psycopg

    name = stream.DATABASE_URL.rsplit("/", 1)[1]
    admin = stream.DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def vacuum_analyze() -> float:
    """VACUUM (ANALYZE) the soak's database, as autovacuum would; return how long it took."""
    import psycopg

    started = time.monotonic()
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
    return round(time.monotonic() - started, 2)


async def soak(url_of, headers: dict, args: argparse.Namespace, pid: int) -> dict:
    out: dict = {"replies": [], "errors": [], "turns": [], "rss_mb": {}, "vacuum_s": []}
    start = time.monotonic()
    until = start + args.minutes * 60
    ask = f"tokens={args.tokens} rate={args.rate}"

    async def watch_rss() -> None:
        await asyncio.sleep(60)
        out["rss_mb"]["after_1_min"] = rss_mb(pid)

    async def vacuum() -> None:
        while args.vacuum_every:
            await asyncio.sleep(args.vacuum_every)
            took = await asyncio.to_thread(vacuum_analyze)
            out["vacuum_s"].append(took)

    watcher, vacuuming = asyncio.create_task(watch_rss()), asyncio.create_task(vacuum())
    sockets = (one_socket(url_of(i), headers, ask, until, out) for i in range(args.sockets))
    await asyncio.gather(*sockets)
    watcher.cancel()
    vacuuming.cancel()
    out["rss_mb"]["at_end"] = rss_mb(pid)
    out["start"] = start
    return out


def figures(out: dict, args: argparse.Namespace) -> dict:
    start = out["start"]
    per_minute = [0] * args.minutes
    for at, _ in out["replies"]:
        minute = int((at - start) // 60)
        if minute < args.minutes:
            per_minute[minute] += 1
    span = min(5, args.minutes)

    def window(first: bool) -> list[float]:
        lo = 0 if first else (args.minutes - span) * 60
        hi = span * 60 if first else args.minutes * 60
        return [took for at, took in out["replies"] if lo <= at - start < hi]

    first, last = statistics.mean(per_minute[:span]), statistics.mean(per_minute[-span:])
    line = {
        "bench": "soak",
        "minutes": args.minutes,
        "sockets": args.sockets,
        "tokens": args.tokens,
        "rate": args.rate,
        "replies": len(out["replies"]),
        "replies_per_minute": per_minute,
        "first_5_min_per_minute": round(first, 1),
        "last_5_min_per_minute": round(last, 1),
        "throughput_ratio_last_to_first": round(last / first, 3) if first else None,
        "reply_p50_s_first_5": round(statistics.median(window(True)), 3),
        "reply_p50_s_last_5": round(statistics.median(window(False)), 3),
        "rss_mb": out["rss_mb"],
        "turns_min_max": [min(out["turns"], default=0), max(out["turns"], default=0)],
        "vacuum_every_s": args.vacuum_every,
        "vacuum_s_max": max(out["vacuum_s"], default=None),
        "errors": len(out["errors"]),
        "error_kinds": sorted(set(out["errors"]))[:5],
    }
    line["throughput_flat"] = bool(first and last >= 0.9 * first)
    line["no_errors"] = not out["errors"]
    return line


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=int, default=25)
    parser.add_argument("--sockets", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--vacuum-every", type=int, default=60)
    args = parser.parse_args()
    logs = Path(os.environ.get("BENCH_LOG_DIR", "/tmp"))
    llm_port, app_port = free_port(), free_port()
    env = stream.app_env(llm_port)
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    fresh_database()
    stream.prepare_database(env)
    token, ids = stream.make_fixtures(args.sockets)
    headers = {"Authorization": f"Bearer {token}"}
    llm = [sys.executable, "bench/stream_llm.py", str(llm_port)]
    app_log = logs / "soak-daphne.log"
    with (
        serve(llm, llm_port, env, logs / "soak-llm.log"),
        serve(daphne_command(app_port), app_port, env, app_log) as app,
    ):

        def url_of(i: int) -> str:
            return f"ws://127.0.0.1:{app_port}/ws/conversations/{ids[i]}/"

        out = asyncio.run(soak(url_of, headers, args, app.pid))
    print(json.dumps(figures(out, args)), flush=True)


if __name__ == "__main__":
    main()
