"""The capacity curve of one Daphne process (issue 37); prints one JSON line per step.

At each step N chats stream at once, each a fresh conversation with 300 tokens at 20
tokens/s from the paced fake model (bench/stream_llm.py), through one Daphne process on
PostgreSQL + Redis. How they arrive (`--arrivals`):
- `spread` (the default, the knee's): N people each have `--per` (2) chats in a row, the
  first ones starting evenly over one reply's length (tokens / rate = 15 s), so N replies
  are streaming at any moment after the ramp, as when N people chat at once;
- `burst`: N chats started in the same instant (every person pressing Enter together),
  where the starts themselves are the load; the first curve (issue 37) was this one.

Each step reports added latency (model emits → client receives) and time to first
token, p50/p99, tokens lost, the server's CPU seconds and RSS, the bench client's and the
fake model's CPU seconds. The server runs alone on the first core and the client and the
fake model on the others (`pinned` in the last line; `--no-pin` leaves them be), so each
step also says how busy each side's cores were (`server_core_busy`,
`client_cores_busy`: near 1.0, that side's CPU ran out), the 1-minute load average before
the step, and the longest stall of the client's own loop (`client_stall_max_ms`: a token
read late is counted as added latency; the client's cyclic collector is off during a
step). A last line names the knee: the largest step of the passing run from the first
step where p99 added latency < 100 ms and no token is lost. One chat
before the first step warms the process up (lazy imports, the model client) unmeasured.

Each step is bounded: its arrivals, its chats in a row at the rate, + 60 s + N / 10 s; then
the chats still streaming are given up ("timed_out": true): the figures are the finished
chats', and every token the others did not deliver counts as lost.
Loopback only. DATABASE_URL (default .../chatsite_capacity, created and migrated if
missing) and REDIS_URL (default db 10).

    uv run python bench/capacity.py [--steps 25,50,100,200,400,800] [--stop-after-fail]
        [--arrivals spread|burst] [--per 2] [--tokens 300] [--rate 20] [--target app|relay]
        [--step-limit SECONDS]
        [--py-spy /tmp/capacity.svg,/tmp/capacity.txt --py-spy-step 50]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import subprocess
import sys
import time
from contextlib import contextmanager, suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/chatsite_capacity")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/10")

from bench.processes import cpu_seconds, free_port, rss_mb, serve  # noqa: E402
from bench.stream import app_env, make_fixtures, prepare_database, steady  # noqa: E402

STEPS = (25, 50, 100, 200, 400, 800)
KNEE_P99_MS = 100.0


def raise_fd_limit() -> int:
    """Raise this process's open-file limit to its hard limit (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def own_cpu_seconds() -> float:
    """Return the CPU time this (client) process has used so far."""
    times = os.times()
    return times.user + times.system


def passes(step: dict) -> bool:
    """Say whether a step is under the knee's bar (p99 < 100 ms, nothing lost)."""
    p99 = step.get("added_latency_p99_ms")
    return (
        not step.get("timed_out") and step["tokens_lost"] == 0 and p99 is not None
    ) and p99 < KNEE_P99_MS


async def bounded(coro, limit_s: float, chats: int, tokens: int) -> dict:
    """Run one step's load, or give up after `limit_s` and count every token lost; with
    the longest stall of this (client) process's own event loop meanwhile."""
    stalls: list[float] = []
    probe = asyncio.create_task(client_stalls(stalls))
    try:
        async with asyncio.timeout(limit_s):
            result = await coro
    except TimeoutError:
        result = {"chats": chats, "completed": 0, "tokens_lost": chats * tokens, "timed_out": True}
    finally:
        probe.cancel()
    return {**result, "client_stall_max_ms": round(max(stalls, default=0.0), 1)}


async def client_stalls(found: list[float], every_s: float = 0.01) -> None:
    """Record how late this loop wakes a sleeper (ms): a token read then is timed late by
    as much, and counted as the server's added latency. An upper bound: it also covers the
    step's summing-up after the chats (sorting every token's delay, tens of ms at 200)."""
    while True:
        started = time.perf_counter()
        await asyncio.sleep(every_s)
        found.append((time.perf_counter() - started - every_s) * 1000)


@contextmanager
def no_client_collections():
    """Keep Python's cyclic collector out of the step in this (client) process, whose
    loop stamps every token's arrival: a pause there is counted as the server's added
    latency. Its setup's objects are frozen first (full collections over them took up to
    392 ms while the fixtures were made). Measured at steps 100 / 200, the loop's longest
    stall (summing-up included): 37 / 49 ms with the collector on, 24-36 ms off. What the
    step leaves is collected after it."""
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()
        gc.collect()


def start_py_spy(pid: int, outs: str, seconds: int) -> list[subprocess.Popen]:
    """Record the server's stacks for `seconds`: to each of the comma-separated `outs`,
    an SVG flame graph (.svg) or collapsed stacks (anything else)."""
    spies = []
    for out in outs.split(","):
        cmd = ["uv", "tool", "run", "py-spy", "record", "--nonblocking", "-r", "50"]
        cmd += ["-f", "flamegraph" if out.endswith(".svg") else "raw"]
        cmd += ["-o", out, "--pid", str(pid), "-d", str(seconds)]
        spies.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return spies


def pin(pid: int, cores: set[int]) -> None:
    """Run every thread of process `pid` (those it starts later too) on `cores` only."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        with suppress(ProcessLookupError):  # a thread that just ended
            os.sched_setaffinity(int(task.name), cores)


def pinning(app: int, llm: int) -> dict | None:
    """The server on the first core, this client and the fake model on the others, so each
    step says whose CPU ran out; None on a machine of one core (nothing pinned)."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return None
    server, others = {cores[0]}, set(cores[1:])
    pin(app, server)
    pin(llm, others)
    pin(os.getpid(), others)
    return {"server": sorted(server), "client_and_model": sorted(others)}


def run_step(n: int, ctx: dict, args: argparse.Namespace) -> dict:
    """Stream `n` chats at once; return the step's JSON line (the client's collections
    before and after it are outside its figures)."""
    with no_client_collections():
        return _step(n, ctx, args)


def _step(n: int, ctx: dict, args: argparse.Namespace) -> dict:
    per = args.per if args.arrivals == "spread" else 1
    spread_s = args.tokens / args.rate if args.arrivals == "spread" else 0.0
    offset = ctx["used"]
    ctx["used"] += n * per
    load = round(os.getloadavg()[0], 2)
    before = (cpu_seconds(ctx["app"]), own_cpu_seconds(), cpu_seconds(ctx["llm"]))
    spies = []
    if args.py_spy and n == args.py_spy_step:
        spies = start_py_spy(ctx["app"], args.py_spy, int(spread_s + per * args.tokens / args.rate))
    started = time.monotonic()
    timeout = args.step_limit or spread_s + per * args.tokens / args.rate + 60 + n / 10
    load_of_step = steady(
        lambda i: ctx["url_of"](offset + i),
        ctx["headers"],
        ctx["llm_port"],
        users=n,
        per=per,
        tokens=args.tokens,
        rate=args.rate,
        spread_s=spread_s,
        limit_s=timeout,  # then the chats still streaming are given up, counted lost
    )
    # The backstop: the emissions are read after the chats, chat by chat.
    result = asyncio.run(bounded(load_of_step, timeout + 120, n * per, args.tokens))
    for spy in spies:
        spy.wait(timeout=60)
    keep = (
        "added_latency_p50_ms",
        "added_latency_p99_ms",
        "ttft_p50_ms",
        "ttft_p99_ms",
        "tokens_lost",
        "completed",
        "timed_out",
        "errors",
        "client_stall_max_ms",
    )
    line = {
        "step": n,
        "target": args.target,
        "arrivals": args.arrivals,
        "chats": n * per,
        "tok_s": args.rate,
    }
    line["tokens"] = args.tokens
    line |= {k: result[k] for k in keep if result.get(k) not in (None, [])}
    line |= {
        "server_cpu_s": round(cpu_seconds(ctx["app"]) - before[0], 2),
        "server_rss_mb": rss_mb(ctx["app"]),
        "client_cpu_s": round(own_cpu_seconds() - before[1], 2),
        "llm_cpu_s": round(cpu_seconds(ctx["llm"]) - before[2], 2),
        "wall_s": round(time.monotonic() - started, 1),
        "load_1m_before": load,
    }
    if ctx["pinned"]:  # how busy each side's cores were: near 1.0 per core, that side ran out
        line["server_core_busy"] = round(line["server_cpu_s"] / line["wall_s"], 2)
        others = len(ctx["pinned"]["client_and_model"])
        used = line["client_cpu_s"] + line["llm_cpu_s"]
        line["client_cores_busy"] = round(used / line["wall_s"] / others, 2)
    line["passes"] = passes(line)
    return line


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", default=",".join(map(str, STEPS)))
    parser.add_argument("--stop-after-fail", action="store_true")
    parser.add_argument("--arrivals", choices=("spread", "burst"), default="spread")
    parser.add_argument("--per", type=int, default=2, help="chats in a row per person (spread)")
    parser.add_argument("--tokens", type=int, default=300)
    parser.add_argument("--rate", type=int, default=20)
    parser.add_argument("--target", choices=("app", "relay"), default="app")
    parser.add_argument("--step-limit", type=float, help="seconds a step may take (default: above)")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds between steps")
    parser.add_argument("--py-spy", help="files to record the server's stacks to (.svg, .txt)")
    parser.add_argument("--py-spy-step", type=int, help="the step to profile")
    parser.add_argument("--no-pin", action="store_true", help="leave the processes unpinned")
    args = parser.parse_args()
    steps = [min(int(s), 2000) for s in args.steps.split(",") if s.strip()]
    fd_limit = raise_fd_limit()
    logs = Path(os.environ.get("BENCH_LOG_DIR", "/tmp"))
    llm_port, app_port = free_port(), free_port()
    env = app_env(llm_port) | {"RELAY_LLM_URL": f"http://127.0.0.1:{llm_port}/v1"}
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    daphne = [sys.executable, "-m", "chatsite.serve", "-b", "127.0.0.1", "-p", str(app_port)]
    if args.target == "relay":
        token, ids, asgi = "", [], "bench.stream_relay:application"
        url_of = lambda i: f"ws://127.0.0.1:{app_port}/ws/relay/"  # noqa: E731
    else:
        prepare_database(env)
        per = args.per if args.arrivals == "spread" else 1
        token, ids = make_fixtures(sum(steps) * per + 1)  # the first: a warm-up chat
        asgi = "chatsite.asgi:application"
        url_of = lambda i: f"ws://127.0.0.1:{app_port}/ws/conversations/{ids[i]}/"  # noqa: E731
    llm_cmd = [sys.executable, "bench/stream_llm.py", str(llm_port)]
    lines: list[dict] = []
    with (
        serve(llm_cmd, llm_port, env, logs / "capacity-llm.log") as llm,
        serve([*daphne, asgi], app_port, env, logs / f"capacity-{args.target}.log") as app,
    ):
        pinned = pinning(app.pid, llm.pid) if not args.no_pin else None
        print(json.dumps({"daphne_pid": app.pid, "fd_limit": fd_limit}), file=sys.stderr)
        ctx = {
            "app": app.pid,
            "llm": llm.pid,
            "llm_port": llm_port,
            "headers": {"Authorization": f"Bearer {token}"},
            "url_of": url_of,
            "used": 1,
            "pinned": pinned,
        }
        warm = steady(ctx["url_of"], ctx["headers"], llm_port, users=1, per=1, tokens=20, rate=1000)
        warmed = asyncio.run(bounded(warm, 60, 1, 20))  # imports, clients, pools: not measured
        if pinned:  # the threads the warm-up started (the server's pools) on its core too
            pin(app.pid, set(pinned["server"]))
        print(json.dumps({"warm_up_ttft_ms": warmed.get("ttft_p50_ms")}), file=sys.stderr)
        for n in steps:
            line = run_step(n, ctx, args)
            lines.append(line)
            print(json.dumps(line), flush=True)
            if args.stop_after_fail and not line["passes"]:
                break
            time.sleep(args.pause)
    knee = None
    for line in lines:
        if not line["passes"]:
            break
        knee = line["step"]
    bar = {"added_latency_p99_ms_below": KNEE_P99_MS, "tokens_lost": 0}
    steps_run = [x["step"] for x in lines]
    summary = {"knee": knee, "target": args.target, "arrivals": args.arrivals, "bar": bar}
    summary["pinned"] = pinned
    print(json.dumps(summary | {"steps_run": steps_run}))


if __name__ == "__main__":
    main()
