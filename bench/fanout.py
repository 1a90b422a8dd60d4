"""Benchmark fan-out across processes; prints one JSON line.

50 conversations, each watched by 6 sockets (3 on each of two Daphne processes: 300
sockets), all 50 replies started at once (300 tokens at 200 tokens/s). One socket in
three drops mid-reply and reconnects with `sync` (on the other process). Every socket
stitches strictly: after `generation.started` or `sync.state`, each `token` must start
where its text ends. Reports chunks lost and repeated, texts that differ from the stored
reply, time to the last `generation.finished`, and each server's RSS before and after.

Needs PostgreSQL and Redis: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/
chatsite_bench) and REDIS_URL (default db 7).

    uv run python bench/fanout.py [--conversations 50] [--per 6] [--tokens 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.processes import free_port, rss_mb, serve  # noqa: E402
from bench.stream import DATABASE_URL, REDIS_URL, make_fixtures, prepare_database  # noqa: E402


class Watcher:
    """One socket's view of one reply, stitched strictly."""

    def __init__(self) -> None:
        self.text = ""
        self.lost = self.repeated = 0
        self.finished: dict | None = None

    def token(self, frame: dict) -> None:
        if frame["index"] > len(self.text):
            self.lost += 1
            self.text = self.text.ljust(frame["index"], "\0")
        elif frame["index"] < len(self.text):
            self.repeated += 1
            self.text = self.text[: frame["index"]]
        self.text += frame["text"]


async def watch(
    urls: tuple[str, str], headers: dict, go: asyncio.Event, reconnect: bool
) -> Watcher:
    seen = Watcher()
    async with websockets.connect(urls[0], additional_headers=headers, max_size=None) as ws:
        await ws.send(json.dumps({"type": "ping"}))
        while json.loads(await ws.recv())["type"] != "pong":
            pass
        await go.wait()
        tokens = 0
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 120))
            if frame["type"] == "generation.started":
                seen.text = ""
            elif frame["type"] == "token":
                seen.token(frame)
                tokens += 1
                if reconnect and tokens == 3:
                    break
            elif frame["type"] == "generation.finished":
                seen.finished = frame
                return seen
    async with websockets.connect(urls[1], additional_headers=headers, max_size=None) as ws:
        await ws.send(json.dumps({"type": "sync", "after": 0}))
        synced = False
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 120))
            if frame["type"] == "sync.state":
                synced = True
                if frame["generation"] is None:
                    stored = [m for m in frame["messages"] if m["role"] == "assistant"]
                    seen.text = stored[-1]["content"] if stored else ""
                    seen.finished = {"message": stored[-1] if stored else {"content": None}}
                    return seen
                seen.text = frame["generation"]["text"]
            elif frame["type"] == "token" and synced:
                seen.token(frame)
            elif frame["type"] == "generation.finished" and synced:
                seen.finished = frame
                return seen


async def send(url: str, headers: dict, content: str, go: asyncio.Event) -> None:
    async with websockets.connect(url, additional_headers=headers, max_size=None) as ws:
        await go.wait()
        await ws.send(json.dumps({"type": "message.send", "content": content}))
        while json.loads(await asyncio.wait_for(ws.recv(), 120))["type"] != "message.created":
            pass


async def run(ports: list[int], ids: list[str], headers: dict, per: int, tokens: int) -> dict:
    go = asyncio.Event()

    def url(port: int, cid: str) -> str:
        return f"ws://127.0.0.1:{port}/ws/conversations/{cid}/"

    watchers = []
    for cid in ids:
        for k in range(per):
            here, there = ports[k % 2], ports[(k + 1) % 2]
            watchers.append(
                asyncio.create_task(
                    watch((url(here, cid), url(there, cid)), headers, go, reconnect=k % 3 == 2)
                )
            )
    senders = [
        asyncio.create_task(
            send(url(ports[n % 2], cid), headers, f"go tokens={tokens} rate=200 run=f{n}", go)
        )
        for n, cid in enumerate(ids)
    ]
    await asyncio.sleep(2 + len(watchers) / 100)
    started = time.monotonic()
    go.set()
    results = await asyncio.gather(*watchers, return_exceptions=True)
    wall = time.monotonic() - started
    await asyncio.gather(*senders, return_exceptions=True)
    good = [r for r in results if isinstance(r, Watcher)]
    differ = [
        r for r in good if r.finished is None or r.text != r.finished["message"].get("content")
    ]
    return {
        "sockets": len(watchers),
        "replies": len(ids),
        "watched_to_the_end": len(good),
        "chunks_lost": sum(r.lost for r in good),
        "chunks_repeated": sum(r.repeated for r in good),
        "texts_differing": len(differ),
        "wall_s": round(wall, 2),
        "errors": [repr(r)[:160] for r in results if not isinstance(r, Watcher)][:3],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--per", type=int, default=6)
    parser.add_argument("--tokens", type=int, default=300)
    args = parser.parse_args()
    logs = Path(os.environ.get("BENCH_LOG_DIR", "/tmp"))
    llm_port, ports = free_port(), [free_port(), free_port()]
    env = {
        **os.environ,
        "DATABASE_URL": DATABASE_URL,
        "REDIS_URL": REDIS_URL,
        "OPENAI_API_KEY": "sk-bench",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{llm_port}/v1",
        "CHAT_RATE_LIMIT": "100000/m",
        "CHAT_SYNC_RATE_LIMIT": "100000/m",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY", "bench-" + "x" * 50),
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    prepare_database(env)
    token, ids = make_fixtures(args.conversations)
    headers = {"Authorization": f"Bearer {token}"}
    daphne = [sys.executable, "-m", "chatsite.serve", "-b", "127.0.0.1"]
    llm = [sys.executable, "bench/stream_llm.py", str(llm_port)]
    with (
        serve(llm, llm_port, env, logs / "fanout-llm.log"),
        serve(
            [*daphne, "-p", str(ports[0]), "chatsite.asgi:application"],
            ports[0],
            env,
            logs / "fanout-a.log",
        ) as a,
        serve(
            [*daphne, "-p", str(ports[1]), "chatsite.asgi:application"],
            ports[1],
            env,
            logs / "fanout-b.log",
        ) as b,
    ):
        before = [rss_mb(a.pid), rss_mb(b.pid)]
        out = asyncio.run(run(ports, ids, headers, args.per, args.tokens))
        out["rss_mb_before"], out["rss_mb_after"] = before, [rss_mb(a.pid), rss_mb(b.pid)]
    out["targets"] = {
        "nothing_lost": out["chunks_lost"] == 0 and out["chunks_repeated"] == 0,
        "texts_exact": out["texts_differing"] == 0 and out["watched_to_the_end"] == out["sockets"],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
