"""What idle tabs cost one Daphne process (issue 37); prints one JSON line.

`--users` users × `--tabs` browser tabs each; a tab holds what a signed-in conversation
page holds: a list socket (/ws/user/) and a conversation socket (one of the user's
`--conversations`), signed in with a session cookie and an Origin header, the
conversation socket sending `sync` on open and `ping` every 25 s (static/js/socket.js),
the client answering Daphne's protocol pings. Reports, with the load average beside them:
RSS per socket, the server's CPU over `--idle` seconds while all are open, its Redis
connections and subscriptions, the time for one `conversation.updated` (a rename through
the API) to reach every list socket of one user's tabs, and then one reply (300 tokens at
20 tokens/s) streamed to `--watchers` extra sockets on one conversation: added latency
(model emits → watcher receives) p50/p99 and tokens lost.

Every wait is bounded; loopback only. DATABASE_URL (default .../chatsite_capacity) and
REDIS_URL (default db 10).

    uv run python bench/idle_sockets.py [--users 50] [--tabs 50] [--watchers 200] [--idle 60]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import time
from collections import Counter
from importlib import import_module
from pathlib import Path

import httpx
import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# bench.capacity names the capacity database and Redis before bench.stream reads them.
from bench.capacity import raise_fd_limit  # noqa: E402
from bench.processes import cpu_seconds, free_port, rss_mb, serve  # noqa: E402
from bench.stream import WORD, app_env, make_fixtures, pct, prepare_database  # noqa: E402

PING_EVERY_S = 25.0  # static/js/socket.js PING_EVERY_MS


class Tab:
    """What one socket heard: when `conversation.updated` came, and token frames."""

    def __init__(self) -> None:
        self.updated_at: float | None = None
        self.updated = asyncio.Event()
        self.chunks: list[tuple[float, str]] = []
        self.finished = asyncio.Event()
        self.opened = asyncio.Event()
        self.failed: str | None = None
        self.heard: Counter[str] = Counter()
        self.own: set[str] = set()  # a list socket: its user's conversations


def browser_session(token: str) -> str:
    """Return a session cookie signing in the owner of API token `token`."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    from accounts.tokens import authenticate_token

    user = authenticate_token(f"Bearer {token}".encode()).owner
    store = import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return f"{settings.SESSION_COOKIE_NAME}={store.session_key}"


async def pinger(ws) -> None:
    """Send `ping` every 25 s, first at a random point (tabs open at different times)."""
    await asyncio.sleep(random.uniform(0, PING_EVERY_S))
    while True:
        await ws.send(json.dumps({"type": "ping"}))
        await asyncio.sleep(PING_EVERY_S)


async def hold(url: str, headers: dict, tab: Tab, stop: asyncio.Event, gate, page: bool):
    """Open one socket as a tab does and record what it hears until `stop`."""
    try:
        async with gate:
            ws = await websockets.connect(
                url, additional_headers=headers, ping_interval=None, max_size=None, open_timeout=60
            )
            if page:
                await ws.send(json.dumps({"type": "sync", "after": 0}))
        tab.opened.set()
        beat = asyncio.create_task(pinger(ws)) if page else None
        closing = asyncio.create_task(stop.wait())
        try:
            while not stop.is_set():
                receiving = asyncio.create_task(ws.recv())
                await asyncio.wait({receiving, closing}, return_when=asyncio.FIRST_COMPLETED)
                if not receiving.done():
                    receiving.cancel()
                    break
                frame = json.loads(receiving.result())
                tab.heard[frame["type"]] += 1
                if tab.own and frame.get("conversation", {}).get("id") not in tab.own:
                    tab.heard["of_someone_else"] += 1  # another database's user, same Redis
                if frame["type"] == "conversation.updated" and tab.updated_at is None:
                    tab.updated_at = time.time()
                    tab.updated.set()
                elif frame["type"] == "token":
                    tab.chunks.append((time.time(), frame["text"]))
                elif frame["type"] == "generation.finished":
                    tab.finished.set()
        finally:
            closing.cancel()
            if beat is not None:
                beat.cancel()
            await ws.close()
    except Exception as exc:  # a socket refused or dropped: counted, reported
        tab.failed = repr(exc)[:160]
        tab.opened.set()


def redis_use(pid: int) -> dict:
    """Count the server's Redis connections and their subscriptions (CLIENT LIST)."""
    import redis

    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd) if fd.is_symlink() else ""
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            cols = row.split()
            if cols[9] in inodes and cols[2].endswith(":18EB"):  # remote port 6379
                ports.add(int(cols[1].rsplit(":", 1)[1], 16))
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    mine = [c for c in client.client_list() if int(c["addr"].rsplit(":", 1)[1]) in ports]
    return {
        "connections": len(mine),
        "channel_subscriptions": sum(int(c.get("sub", 0)) for c in mine),
        "pattern_subscriptions": sum(int(c.get("psub", 0)) for c in mine),
    }


def threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def load() -> float:
    return round(os.getloadavg()[0], 2)


async def rename_reaches_tabs(api: str, token: str, cid: str, tabs: list[Tab]) -> dict:
    """Rename one conversation; time until every list socket of its user heard of it."""
    sent = time.time()
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as client:
        response = await client.patch(f"{api}/conversations/{cid}", json={"title": "renamed"})
    answered = time.time() - sent
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(t.updated.wait() for t in tabs)), 30)
    arrived = [t.updated_at - sent for t in tabs if t.updated_at is not None]
    return {
        "status": response.status_code,
        "api_answered_ms": round(answered * 1000, 1),
        "tabs": len(tabs),
        "tabs_reached": len(arrived),
        "all_reached_ms": round(max(arrived) * 1000, 1) if arrived else None,
        "p50_ms": pct(arrived, 0.5) if arrived else None,
        "load_1m": load(),
    }


async def fan_out(
    args, url: str, headers: dict, llm_port: int, stop, gate
) -> tuple[dict, list[asyncio.Task]]:
    """Stream one reply to `--watchers` sockets on one conversation; added latency."""
    watchers = [Tab() for _ in range(args.watchers)]
    tasks = [asyncio.create_task(hold(url, headers, w, stop, gate, True)) for w in watchers]
    await asyncio.wait_for(asyncio.gather(*(w.opened.wait() for w in watchers)), 120)
    await asyncio.sleep(2)
    run = f"idle-{random.getrandbits(32):x}"
    async with websockets.connect(url, additional_headers=headers, ping_interval=None) as ws:
        content = f"hello tokens={args.tokens} rate={args.rate} run={run}"
        await ws.send(json.dumps({"type": "message.send", "content": content}))
        waiting = [w.finished.wait() for w in watchers if w.failed is None]
        limit = args.tokens / args.rate + 60
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*waiting), limit)
    async with httpx.AsyncClient() as client:
        emitted = (await client.get(f"http://127.0.0.1:{llm_port}/emissions?run={run}")).json()
    delays, lost = [], 0
    for w in watchers:
        seen = 0
        for received_at, text in w.chunks:
            for match in WORD.finditer(text):
                delays.append(received_at - emitted[int(match.group(1))])
                seen += 1
        lost += args.tokens - seen
    return {
        "watchers": args.watchers,
        "watchers_failed": sum(1 for w in watchers if w.failed),
        "watchers_finished": sum(1 for w in watchers if w.finished.is_set()),
        "added_latency_p50_ms": pct(delays, 0.5) if delays else None,
        "added_latency_p99_ms": pct(delays, 0.99) if delays else None,
        "tokens_lost": lost,
        "load_1m": load(),
    }, tasks


async def measure(args, app, port: int, llm_port: int, users: list[tuple[str, str, list]]):
    out: dict = {}
    gate = asyncio.Semaphore(args.connect_at_once)
    stop = asyncio.Event()
    origin = f"http://127.0.0.1:{port}"
    ws_base = f"ws://127.0.0.1:{port}/ws"
    await asyncio.sleep(2)
    out["rss_mb_before"], out["threads_before"] = rss_mb(app.pid), threads(app.pid)
    out["redis_before"] = redis_use(app.pid)
    started = time.monotonic()
    tasks, list_tabs = [], []
    for u, (_token, cookie, ids) in enumerate(users):
        headers = {"Origin": origin, "Cookie": cookie}
        for k in range(args.tabs):
            tab, page = Tab(), Tab()
            tab.own = set(ids)
            list_tabs.append((u, tab, page))
            url = f"{ws_base}/conversations/{ids[k % (len(ids) - 1)]}/"  # the last: watched
            tasks.append(
                asyncio.create_task(hold(f"{ws_base}/user/", headers, tab, stop, gate, False))
            )
            tasks.append(asyncio.create_task(hold(url, headers, page, stop, gate, True)))
    every = [t for _, tab, page in list_tabs for t in (tab, page)]
    await asyncio.wait_for(asyncio.gather(*(t.opened.wait() for t in every)), 600)
    out["sockets"] = len(every)
    out["sockets_failed"] = sum(1 for t in every if t.failed)
    out["failures"] = sorted({t.failed for t in every if t.failed})[:3]
    out["connect_all_s"] = round(time.monotonic() - started, 1)
    await asyncio.sleep(10)  # the syncs answered, the server settled
    rss = rss_mb(app.pid)
    out["rss_mb_open"], out["threads_open"] = rss, threads(app.pid)
    out["rss_kb_per_socket"] = round((rss - out["rss_mb_before"]) * 1024 / len(every), 1)
    out["redis_open"] = redis_use(app.pid)
    load_before, cpu_before = load(), cpu_seconds(app.pid)
    await asyncio.sleep(args.idle)
    out["idle"] = {
        "seconds": args.idle,
        "server_cpu_s": round(cpu_seconds(app.pid) - cpu_before, 2),
        "load_1m_before": load_before,
        "load_1m_after": load(),
    }
    out["frames_heard_before_rename"] = {
        "list_sockets": sum((tab.heard for _, tab, _ in list_tabs), Counter()),
        "conversation_sockets": sum((page.heard for _, _, page in list_tabs), Counter()),
    }
    token0, _, ids0 = users[0]
    tabs0 = [tab for u, tab, _ in list_tabs if u == 0]
    for tab in tabs0:  # only the rename's frame counts
        tab.updated_at = None
        tab.updated.clear()
    api = f"http://127.0.0.1:{port}/api/v1"
    out["updated_to_user_tabs"] = await rename_reaches_tabs(api, token0, ids0[0], tabs0)
    watch_url = f"{ws_base}/conversations/{users[0][2][-1]}/"
    headers0 = {"Origin": origin, "Cookie": users[0][1]}
    out["fan_out"], more = await fan_out(args, watch_url, headers0, llm_port, stop, gate)
    out["rss_mb_end"] = rss_mb(app.pid)
    stop.set()
    await asyncio.wait_for(asyncio.gather(*tasks, *more, return_exceptions=True), 120)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--tabs", type=int, default=50, help="tabs per user (2 sockets each)")
    parser.add_argument("--conversations", type=int, default=5, help="per user")
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--idle", type=float, default=60)
    parser.add_argument("--tokens", type=int, default=300)
    parser.add_argument("--rate", type=int, default=20)
    parser.add_argument("--connect-at-once", type=int, default=50)
    args = parser.parse_args()
    args.users, args.tabs = min(args.users, 200), min(args.tabs, 100)
    args.idle = min(args.idle, 600)
    fd_limit = raise_fd_limit()
    logs = Path(os.environ.get("BENCH_LOG_DIR", "/tmp"))
    llm_port, port = free_port(), free_port()
    env = {**app_env(llm_port), "CHAT_SYNC_RATE_LIMIT": "100000/m"}
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    prepare_database(env)
    users = []
    for _user in range(args.users):
        token, ids = make_fixtures(args.conversations + 1)  # the last: the watched one
        users.append((token, browser_session(token), ids))
    daphne = [sys.executable, "-m", "chatsite.serve", "-b", "127.0.0.1", "-p", str(port)]
    llm_cmd = [sys.executable, "bench/stream_llm.py", str(llm_port)]
    with (
        serve(llm_cmd, llm_port, env, logs / "idle-llm.log"),
        serve([*daphne, "chatsite.asgi:application"], port, env, logs / "idle-daphne.log") as app,
    ):
        print(json.dumps({"daphne_pid": app.pid, "fd_limit": fd_limit}), file=sys.stderr)
        out = asyncio.run(measure(args, app, port, llm_port, users))
    out = {"users": args.users, "tabs_per_user": args.tabs, **out}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
