"""The capacity curve of one server process, judged against the bare relay's (issues 37,
59); prints one JSON line per step, server and target.

At each step N chats stream at once, each a fresh conversation with 300 tokens at 20
tokens/s from the paced fake model (bench/stream_llm.py), through one server process on
PostgreSQL + Redis: for each `--server` (daphne, granian) and `--target` (app, relay: the
floor, bench/stream_relay.py), one process, all started together and taking turns at each
step, the order turning round from step to step (alternated). How they arrive (`--arrivals`):
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
step where p99 added latency < 100 ms and no token is lost, for each server and target,
and with both targets the app against the relay on each server (`against_relay`: the
knees' ratio, goal ≥ 1.0; the CPU per token delivered at the app's knee and its ratio to
the relay's at the same step, goal ≤ 1.3). One chat before the first step warms each
process up (lazy imports, the model client) unmeasured.

Each step is bounded: its arrivals, its chats in a row at the rate, + 60 s + N / 10 s; then
the chats still streaming are given up ("timed_out": true): the figures are the finished
chats', and every token the others did not deliver counts as lost.
Loopback only. DATABASE_URL (default .../chatsite_capacity, created and migrated if
missing) and REDIS_URL (default db 10).

    uv run python bench/capacity.py [--steps 25,50,100,200,400,800] [--stop-after-fail]
        [--server daphne,granian] [--target app,relay]
        [--arrivals spread|burst] [--per 2] [--tokens 300] [--rate 20] [--step-limit SECONDS]
        [--py-spy /tmp/capacity.svg,/tmp/capacity.txt --py-spy-step 50]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/chatsite_capacity")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/10")

from bench.processes import (  # noqa: E402
    cpu_seconds,
    family,
    free_port,
    own_cpu_seconds,
    pin,
    pin_all,
    raise_fd_limit,
    serve,
    server_cpu_seconds,
    server_rss_mb,
    start_py_spy,
)
from bench.stream import app_env, make_fixtures, prepare_database, steady  # noqa: E402

STEPS = (25, 50, 100, 200, 400, 800)
KNEE_P99_MS = 100.0


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


CORES = sorted(os.sched_getaffinity(0))  # before this process pins itself


def pinning(app: int, llm: int) -> dict | None:
    """The server on the first core, this client and the fake model on the others, so each
    step says whose CPU ran out; None on a machine of one core (nothing pinned)."""
    cores = CORES
    if len(cores) < 2:
        return None
    server, others = {cores[0]}, set(cores[1:])
    pin_all(app, server)
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
    before = (server_cpu_seconds(ctx["app"]), own_cpu_seconds(), cpu_seconds(ctx["llm"]))
    spies = []
    if args.py_spy and n == args.py_spy_step:
        seconds = int(spread_s + per * args.tokens / args.rate)
        name = f"-{ctx['server']}-{ctx['target']}"  # a file per server and target
        outs = ",".join(
            f"{Path(o).with_suffix('')}{name}{Path(o).suffix}" for o in args.py_spy.split(",")
        )
        spies = [
            s
            for pid in family(ctx["app"])
            for s in start_py_spy(pid, outs.replace(name, f"{name}-{pid}"), seconds)
        ]
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
        "target": ctx["target"],
        "arrivals": args.arrivals,
        "chats": n * per,
        "tok_s": args.rate,
    }
    line["tokens"] = args.tokens
    line |= {k: result[k] for k in keep if result.get(k) not in (None, [])}
    line |= {
        "server_cpu_s": round(server_cpu_seconds(ctx["app"]) - before[0], 2),
        "server_rss_mb": server_rss_mb(ctx["app"]),
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


SERVERS = ("daphne", "granian")
TARGETS = ("app", "relay")


def server_command(server: str, port: int, asgi: str) -> list[str]:
    """One server process for `asgi` on `port`: Daphne on uvloop as `bin/run` starts it, or
    Granian (one worker, its Rust runtime on one thread, uvloop) as `deploy/` runs it."""
    if server == "daphne":
        return [sys.executable, "-m", "chatsite.serve", "-b", "127.0.0.1", "-p", str(port), asgi]
    return [sys.executable, "-m", "chatsite.granian", "--port", str(port), asgi]


def figures_of(lines: list[dict], server: str, target: str) -> tuple[int | None, dict]:
    """The knee of one server and target (the largest step of its passing run from the first
    step) and its steps by N."""
    mine = [x for x in lines if x["server"] == server and x["target"] == target]
    knee = None
    for line in mine:
        if not line["passes"]:
            break
        knee = line["step"]
    return knee, {x["step"]: x for x in mine}


def cpu_per_token(line: dict) -> float | None:
    """The server's CPU microseconds per token delivered in a step."""
    delivered = line["chats"] * line["tokens"] - line["tokens_lost"]
    return round(line["server_cpu_s"] * 1e6 / delivered, 1) if delivered > 0 else None


def against_relay(lines: list[dict], server: str) -> dict:
    """The app judged against the bare relay on the same server, in the same run: knees,
    their ratio, and the CPU per token at the app's knee (and the relay's at that step)."""
    app_knee, app = figures_of(lines, server, "app")
    relay_knee, relay = figures_of(lines, server, "relay")
    out: dict = {"server": server, "knee": app_knee, "relay_knee": relay_knee}
    if app_knee and relay_knee:
        out["knee_ratio_to_relay"] = round(app_knee / relay_knee, 2)
    if app_knee and app_knee in relay:
        ours, theirs = cpu_per_token(app[app_knee]), cpu_per_token(relay[app_knee])
        out |= {"cpu_us_per_token": ours, "relay_cpu_us_per_token": theirs}
        if ours and theirs:
            out["cpu_per_token_ratio_to_relay"] = round(ours / theirs, 2)
    for n in (200, 400):  # the two reference steps, where they ran
        for name, steps in (("app", app), ("relay", relay)):
            if n in steps:
                out[f"{name}_p99_ms_at_{n}"] = steps[n].get("added_latency_p99_ms")
                out[f"{name}_tokens_lost_at_{n}"] = steps[n]["tokens_lost"]
    out["knee_ok"] = bool(app_knee and relay_knee and app_knee >= relay_knee)
    out["cpu_ok"] = out.get("cpu_per_token_ratio_to_relay", 99) <= CPU_RATIO_GOAL
    return out


CPU_RATIO_GOAL = 1.3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", default=",".join(map(str, STEPS)))
    parser.add_argument("--stop-after-fail", action="store_true")
    parser.add_argument("--arrivals", choices=("spread", "burst"), default="spread")
    parser.add_argument("--per", type=int, default=2, help="chats in a row per person (spread)")
    parser.add_argument("--tokens", type=int, default=300)
    parser.add_argument("--rate", type=int, default=20)
    parser.add_argument("--target", default="app,relay", help="app, relay or both (a,b)")
    parser.add_argument("--server", default="daphne", help="daphne, granian or both (a,b)")
    parser.add_argument("--step-limit", type=float, help="seconds a step may take (default: above)")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds between steps")
    parser.add_argument("--py-spy", help="files to record the server's stacks to (.svg, .txt)")
    parser.add_argument("--py-spy-step", type=int, help="the step to profile")
    parser.add_argument("--no-pin", action="store_true", help="leave the processes unpinned")
    args = parser.parse_args()
    steps = [min(int(s), 2000) for s in args.steps.split(",") if s.strip()]
    servers = [s for s in args.server.split(",") if s in SERVERS]
    targets = [t for t in args.target.split(",") if t in TARGETS]
    runs = [(server, target) for server in servers for target in targets]
    if not runs:
        parser.error(f"--server among {SERVERS}, --target among {TARGETS}")
    fd_limit = raise_fd_limit()
    logs = Path(os.environ.get("BENCH_LOG_DIR", "/tmp"))
    llm_port = free_port()
    env = app_env(llm_port) | {"RELAY_LLM_URL": f"http://127.0.0.1:{llm_port}/v1"}
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    per = args.per if args.arrivals == "spread" else 1
    share = sum(steps) * per + 1  # each app server's conversations (+ its warm-up), used once
    token, ids = "", []
    if "app" in targets:
        prepare_database(env)
        token, ids = make_fixtures(len(servers) * share)
    lines: list[dict] = []
    with ExitStack() as stack:
        llm_cmd = [sys.executable, "bench/stream_llm.py", str(llm_port)]
        llm = stack.enter_context(serve(llm_cmd, llm_port, env, logs / "capacity-llm.log"))
        ctxs = {}
        for server, target in runs:
            port = free_port()
            asgi = "chatsite.asgi:application" if target == "app" else RELAY_ASGI
            log = logs / f"capacity-{server}-{target}.log"
            proc = stack.enter_context(serve(server_command(server, port, asgi), port, env, log))
            ctxs[server, target] = {
                "server": server,
                "target": target,
                "app": proc.pid,
                "llm": llm.pid,
                "llm_port": llm_port,
                "headers": {"Authorization": f"Bearer {token}"},
                "url_of": url_maker(target, port, ids[servers.index(server) * share :]),
            }
        pinned = None
        for ctx in ctxs.values():
            ctx["pinned"] = pinned = pinning(ctx["app"], llm.pid) if not args.no_pin else None
            warm_up(ctx)
        print(json.dumps({"server_pids": {f"{s}-{t}": c["app"] for (s, t), c in ctxs.items()},
                          "fd_limit": fd_limit}), file=sys.stderr)  # fmt: skip
        failed: set[tuple[str, str]] = set()
        for i, n in enumerate(steps):
            # Alternated: the order of the servers and targets turns round at each step.
            for key in runs if i % 2 == 0 else runs[::-1]:
                if key in failed:
                    continue
                line = {"server": key[0]} | run_step(n, ctxs[key], args)
                lines.append(line)
                print(json.dumps(line), flush=True)
                if args.stop_after_fail and not line["passes"]:
                    failed.add(key)
                time.sleep(args.pause)
    bar = {"added_latency_p99_ms_below": KNEE_P99_MS, "tokens_lost": 0}
    summary: dict = {"arrivals": args.arrivals, "bar": bar, "pinned": pinned, "steps_run": steps}
    summary["knees"] = {f"{s}-{t}": figures_of(lines, s, t)[0] for s, t in runs}
    if "app" in targets and "relay" in targets:
        summary["against_relay"] = [against_relay(lines, server) for server in servers]
    print(json.dumps(summary))


RELAY_ASGI = "bench.stream_relay:application"


def url_maker(target: str, port: int, ids: list[str]):
    """The websocket URL of a server's i-th chat: the relay's one route, or for the app its
    i-th conversation."""
    if target == "relay":
        return lambda i: f"ws://127.0.0.1:{port}/ws/relay/"
    return lambda i: f"ws://127.0.0.1:{port}/ws/conversations/{ids[i]}/"


def warm_up(ctx: dict) -> None:
    """One chat unmeasured: imports, clients, pools; then the threads it started (the
    server's pools) are pinned to the server's core too."""
    warm = steady(ctx["url_of"], ctx["headers"], ctx["llm_port"], users=1, per=1, tokens=20,
                  rate=1000)  # fmt: skip
    warmed = asyncio.run(bounded(warm, 60, 1, 20))
    ctx["used"] = 1
    if ctx["pinned"]:
        pin_all(ctx["app"], set(ctx["pinned"]["server"]))
    print(json.dumps({"warm_up_ttft_ms": warmed.get("ttft_p50_ms"), "of": ctx["target"]}),
          file=sys.stderr)  # fmt: skip


if __name__ == "__main__":
    main()
