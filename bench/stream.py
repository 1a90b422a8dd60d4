"""Benchmark the websocket stream; prints one JSON line.

(1) one reply of 2,000 tokens at 1,000 tokens/s: every token delivered, added latency
    p50/p99 (server emits → client receives), frames sent;
(2) 200 conversations × 300 tokens at once through one Daphne process on Redis: time to
    first token p50/p99, all completed, chunks lost;
(3) steady load: 50 users, each having `--steady-per` chats one after another (a fresh
    conversation each), 300 tokens at 50 tokens/s, then again at 20 tokens/s: TTFT and
    added latency p50/p99, tokens lost;
(4) the burst through a bare relay consumer (bench/stream_relay.py), and (2)/(4);
    also through the same relay reading the model with ChatOpenAI (the client the stack
    prescribes), so the ratios separate the client's cost from the app's own.
Each app step also reports the server's CPU: in all, per token delivered (`cpu_us_per_token`,
everything the process did for the step: claims, agent runs, storing, frames) and per chat.

Needs PostgreSQL and Redis: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/
chatsite_bench, created and migrated if missing) and REDIS_URL (default db 7).

    uv run python bench/stream.py [--streams 200] [--tokens 300] [--long 2000] [--steady-per 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.processes import cpu_seconds, free_port, serve  # noqa: E402

DATABASE_URL = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/chatsite_bench")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/7")
WORD = re.compile(r"w(\d+) ")


def app_env(llm_port: int) -> dict[str, str]:
    """Return the environment of a bench Daphne process talking to the fake model."""
    return {
        **os.environ,
        "DATABASE_URL": DATABASE_URL,
        "REDIS_URL": REDIS_URL,
        "OPENAI_API_KEY": "sk-bench",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{llm_port}/v1",
        "CHAT_RATE_LIMIT": "100000/m",
        # As in production: debug mode keeps every SQL query in memory and logs more.
        "DJANGO_DEBUG": "0",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY", "bench-" + "x" * 50),
        "LOG_LEVEL": "WARNING",
        "DB_POOL_SIZE": os.environ.get("DB_POOL_SIZE", "20"),
    }


def prepare_database(env: dict[str, str]) -> None:
    """Create the bench database if needed and migrate it."""
    import psycopg

    name = DATABASE_URL.rsplit("/", 1)[1]
    admin = DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0 ENCODING UTF8')
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)


def make_fixtures(n: int) -> tuple[str, list[str]]:
    """Create a bench user, an API token and `n` conversations; return them."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from accounts.tokens import create_api_token
    from conversations import services
    from core import rls

    user = get_user_model().objects.create_user(username=f"bench-{uuid.uuid4().hex[:8]}")
    with rls.as_user(user.pk):  # the user's own rows (PostgreSQL row-level security)
        token = create_api_token(user=user, name="bench").secret
        ids = [
            str(services.create_conversation(user=user, title=f"bench {i}").id) for i in range(n)
        ]
    return token, ids


def with_cpu(pid: int, step, tokens_of) -> dict:
    """Run one step, adding the server's CPU per token delivered and per chat."""
    before = cpu_seconds(pid)
    result = asyncio.run(step())
    used = cpu_seconds(pid) - before
    tokens, chats = tokens_of(result)
    result["server_cpu_s"] = round(used, 2)
    if tokens:
        result["cpu_us_per_token"] = round(used / tokens * 1e6, 1)
    if chats:
        result["cpu_ms_per_chat"] = round(used / chats * 1000, 1)
    return result


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))] * 1000, 1)


def _failed(end: dict) -> bool:
    """Say whether a chat ended in an `error` frame or a reply stored as failed."""
    return end["type"] == "error" or end.get("finish_reason") == "error"


async def one_stream(url: str, headers: dict, content: str, ready: asyncio.Event) -> dict:
    """Send one message and record every token chunk until the run is finished."""
    async with websockets.connect(url, additional_headers=headers, max_size=None) as ws:
        await ws.send(json.dumps({"type": "ping"}))
        while json.loads(await ws.recv())["type"] != "pong":
            pass
        await ready.wait()
        sent_at, chunks, first, text, ok = time.time(), [], None, "", True
        await ws.send(json.dumps({"type": "message.send", "content": content}))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 120))
            if frame["type"] == "token":
                now = time.time()
                first = first or now
                ok = ok and frame["index"] == len(text)
                text += frame["text"]
                chunks.append((now, frame["text"]))
            elif frame["type"] in ("generation.finished", "error"):
                break
        return {
            "ttft": (first or time.time()) - sent_at,
            "chunks": chunks,
            "text": text,
            "contiguous": ok,
            "end": frame,
        }


async def many(url_of, headers: dict, n: int, tokens: int, run: str) -> dict:
    ready = asyncio.Event()
    tasks = [
        asyncio.create_task(
            one_stream(url_of(i), headers, f"hello tokens={tokens} run={run}-{i}", ready)
        )
        for i in range(n)
    ]
    await asyncio.sleep(1.0 + n / 100)  # every socket connected and answered its ping
    started = time.monotonic()
    ready.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    elapsed = time.monotonic() - started
    good = [r for r in results if isinstance(r, dict)]
    expected = "".join(f"w{i} " for i in range(tokens))
    complete = [r for r in good if r["contiguous"] and r["text"].strip() == expected.strip()]
    return {
        "ttft_p50_ms": pct([r["ttft"] for r in good], 0.5) if good else None,
        "ttft_p99_ms": pct([r["ttft"] for r in good], 0.99) if good else None,
        "completed": len(complete),
        "streams": n,
        "chunks_lost": sum(tokens - len(WORD.findall(r["text"])) for r in good)
        + (n - len(good)) * tokens,
        "wall_s": round(elapsed, 2),
        "errors": [repr(r)[:200] for r in results if not isinstance(r, dict)][:3],
    }


async def latency(url: str, headers: dict, llm_port: int, tokens: int) -> dict:
    run = f"long-{uuid.uuid4().hex[:6]}"
    ready = asyncio.Event()
    ready.set()
    result = await one_stream(url, headers, f"hello tokens={tokens} rate=1000 run={run}", ready)
    async with httpx.AsyncClient() as client:
        emitted = (await client.get(f"http://127.0.0.1:{llm_port}/emissions?run={run}")).json()
    delays = []
    for received_at, text in result["chunks"]:
        for match in WORD.finditer(text):
            delays.append(received_at - emitted[int(match.group(1))])
    delivered = len(WORD.findall(result["text"]))
    return {
        "tokens_sent": tokens,
        "tokens_delivered": delivered,
        "all_delivered": delivered == tokens and result["contiguous"],
        "added_latency_p50_ms": pct(delays, 0.5),
        "added_latency_p99_ms": pct(delays, 0.99),
        "frames_sent": len(result["chunks"]),
        "finish_reason": result["end"].get("finish_reason"),
    }


async def steady(
    url_of,
    headers: dict,
    llm_port: int,
    *,
    users: int,
    per: int,
    tokens: int,
    rate: int,
    spread_s: float = 0.0,
    limit_s: float | None = None,
) -> dict:
    """`users` users at a time, each having `per` chats in a row at `rate` tokens/s; the
    users' first chats start evenly over `spread_s` seconds (0: all in the same instant).

    After `limit_s` seconds the chats still streaming are given up ("timed_out"): the
    figures are those of the chats that finished, every other token counts as lost."""
    tag = uuid.uuid4().hex[:6]
    ready = asyncio.Event()
    ready.set()
    chats: list[dict] = []

    async def user(u: int) -> None:
        await asyncio.sleep(spread_s * u / users)
        for k in range(per):
            run = f"steady-{tag}-{u}-{k}"
            content = f"hello tokens={tokens} rate={rate} run={run}"
            result = await one_stream(url_of(u * per + k), headers, content, ready)
            chats.append({**result, "run": run})

    started = time.monotonic()
    tasks = [asyncio.ensure_future(user(u)) for u in range(users)]
    done, pending = await asyncio.wait(tasks, timeout=limit_s)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    elapsed = time.monotonic() - started
    outcomes = [task.exception() for task in done if task.exception() is not None]
    delays: list[float] = []
    delivered = 0
    async with httpx.AsyncClient() as client:
        for chat in chats:
            url = f"http://127.0.0.1:{llm_port}/emissions?run={chat['run']}"
            emitted = (await client.get(url)).json()
            for received_at, text in chat["chunks"]:
                for match in WORD.finditer(text):
                    delays.append(received_at - emitted[int(match.group(1))])
            delivered += len(WORD.findall(chat["text"]))
    return {
        "chats": users * per,
        "completed": sum(1 for c in chats if c["contiguous"] and not _failed(c["end"])),
        "tokens_rate": rate,
        "tokens_delivered": delivered,
        "tokens_lost": users * per * tokens - delivered,
        "ttft_p50_ms": pct([c["ttft"] for c in chats], 0.5) if chats else None,
        "ttft_p99_ms": pct([c["ttft"] for c in chats], 0.99) if chats else None,
        "added_latency_p50_ms": pct(delays, 0.5) if delays else None,
        "added_latency_p99_ms": pct(delays, 0.99) if delays else None,
        "frames_sent": sum(len(c["chunks"]) for c in chats),
        "wall_s": round(elapsed, 2),
        "timed_out": bool(pending),
        "errors": [repr(o)[:200] for o in outcomes][:3],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=300)
    parser.add_argument("--long", type=int, default=2000)
    parser.add_argument("--steady-users", type=int, default=50)
    parser.add_argument("--steady-per", type=int, default=4)
    args = parser.parse_args()
    steady_chats = args.steady_users * args.steady_per
    logs = Path(os.environ.get("BENCH_LOG_DIR", "/tmp"))
    llm_port, app_port, relay_port = free_port(), free_port(), free_port()
    env = app_env(llm_port)
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    prepare_database(env)
    token, ids = make_fixtures(args.streams + 1 + 2 * steady_chats)
    headers = {"Authorization": f"Bearer {token}"}
    daphne = [sys.executable, "-m", "chatsite.serve", "-b", "127.0.0.1"]
    relay_env = {k: v for k, v in env.items() if k != "REDIS_URL"}
    relay_env["RELAY_LLM_URL"] = env["OPENAI_BASE_URL"]
    out: dict = {"streams": args.streams, "tokens_per_stream": args.tokens}
    llm = [sys.executable, "bench/stream_llm.py", str(llm_port)]
    with serve(llm, llm_port, env, logs / "bench-llm.log"):
        app_cmd = [*daphne, "-p", str(app_port), "chatsite.asgi:application"]
        with serve(app_cmd, app_port, env, logs / "bench-daphne.log") as app:

            def url_of(i: int) -> str:
                return f"ws://127.0.0.1:{app_port}/ws/conversations/{ids[i]}/"

            out["single"] = with_cpu(
                app.pid,
                lambda: latency(url_of(args.streams), headers, llm_port, args.long),
                lambda r: (r["tokens_delivered"], 1),
            )
            out["concurrent"] = with_cpu(
                app.pid,
                lambda: many(url_of, headers, args.streams, args.tokens, "app"),
                lambda r: (r["completed"] * args.tokens, r["streams"]),
            )
            first = args.streams + 1
            for rate in (50, 20):
                offset = first + (0 if rate == 50 else steady_chats)
                out[f"steady_{rate}"] = with_cpu(
                    app.pid,
                    lambda offset=offset, rate=rate: steady(
                        lambda i: url_of(offset + i),
                        headers,
                        llm_port,
                        users=args.steady_users,
                        per=args.steady_per,
                        tokens=args.tokens,
                        rate=rate,
                    ),
                    lambda r: (r["tokens_delivered"], r["chats"]),
                )
        relay_cmd = [*daphne, "-p", str(relay_port), "bench.stream_relay:application"]
        for name, client in (("baseline", "httpx"), ("baseline_model_client", "langchain")):
            client_env = {**relay_env, "RELAY_CLIENT": client}
            with serve(relay_cmd, relay_port, client_env, logs / f"bench-relay-{client}.log"):
                out[name] = asyncio.run(
                    many(
                        lambda i: f"ws://127.0.0.1:{relay_port}/ws/relay/",
                        {},
                        args.streams,
                        args.tokens,
                        f"relay-{client}",
                    )
                )
    app = out["concurrent"]
    for name, suffix in (("baseline", ""), ("baseline_model_client", "_vs_model_client")):
        base = out[name]
        if app["ttft_p50_ms"] and base["ttft_p50_ms"]:
            out[f"ttft_ratio_p50{suffix}"] = round(app["ttft_p50_ms"] / base["ttft_p50_ms"], 2)
            out[f"ttft_ratio_p99{suffix}"] = round(app["ttft_p99_ms"] / base["ttft_p99_ms"], 2)
        if base["wall_s"]:
            out[f"wall_ratio{suffix}"] = round(app["wall_s"] / base["wall_s"], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
