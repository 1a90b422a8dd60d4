"""Benchmark: does embedding an upload slow everyone's streams? Prints one JSON line.

One Daphne process streams `--streams` replies (`--tokens` at `--rate` tokens/s each)
while a document of `--chunks` chunks is uploaded and embedded with the bundled model:
- `none`: no upload (the streams alone);
- `thread`: the embedding in the web process (CHAT_TASKS=immediate: as before the tasks
  framework, a thread of the process that streams);
- `worker`: the embedding in `manage.py worker`, its own process (CHAT_TASKS=database).
The modes alternate (none, thread, worker, none, worker); each reports the tokens' added
latency p50/p99 (server emits → client receives), tokens lost, the web process's CPU, and
how long the document took to be searchable. `worker_no_worse` compares the worker runs'
p99 with the no-upload runs' (within 20% or 5 ms: this machine's noise).

Needs PostgreSQL and Redis (as bench/stream.py).

    uv run python bench/embed_under_load.py [--streams 200] [--chunks 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.processes import cpu_seconds, free_port, serve  # noqa: E402
from bench.stream import app_env, make_fixtures, prepare_database, steady  # noqa: E402

MODES = ("none", "thread", "worker", "none", "worker")


def document(chunks: int) -> bytes:
    """A Markdown document of about `chunks` chunks (two per section)."""
    sections = [
        f"# Part {n}\n\n" + f"Paragraph {n} about harbour number {n} and its ships. " * 40
        for n in range(max(1, chunks // 2))
    ]
    return "\n\n".join(sections).encode()


async def upload_and_wait(port: int, headers: dict, data: bytes) -> dict:
    """Upload the document; return when every chunk is embedded (searchable by meaning)."""
    started = time.monotonic()
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=600) as client:
        files = {"file": ("harbours.md", data, "text/markdown")}
        answer = await client.post("/api/v1/documents", files=files, headers=headers)
        answer.raise_for_status()
        body = answer.json()
        while body["indexed_chunks"] < body["chunk_count"]:
            await asyncio.sleep(0.5)
            page = (await client.get("/api/v1/documents", headers=headers)).json()
            body = next(d for d in page["items"] if d["id"] == body["id"])
    return {
        "chunks": body["chunk_count"],
        "searchable_after_s": round(time.monotonic() - started, 1),
    }


async def one_mode(
    mode: str, port: int, llm_port: int, headers: dict, ids: list[str], args, uploader: dict
) -> dict:
    """The streams, and (unless `none`) another user's upload meanwhile: the streaming
    users have no documents, so their turns search none (the cost measured is the upload's)."""

    def url_of(i: int) -> str:
        return f"ws://127.0.0.1:{port}/ws/conversations/{ids[i]}/"

    def streams():
        return steady(
            url_of,
            headers,
            llm_port,
            users=args.streams,
            per=1,
            tokens=args.tokens,
            rate=args.rate,
            spread_s=2.0,
        )

    if mode == "none":
        return {"streams": await streams()}
    # Warmed first, as a long-running server or worker is: the model loaded, the worker up.
    await upload_and_wait(port, uploader, document(2))
    upload = asyncio.ensure_future(upload_and_wait(port, uploader, document(args.chunks)))
    result = {"streams": await streams()}
    result["document"] = await upload
    return result


@contextmanager
def worker_for(mode: str, env: dict[str, str], log: Path) -> Iterator[None]:
    """A `manage.py worker` beside the server in `worker` mode (none otherwise)."""
    if mode != "worker":
        yield
        return
    with open(log, "w") as out:
        command = [sys.executable, "manage.py", "worker", "--interval", "0.2"]
        worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
        try:
            yield
        finally:
            worker.terminate()
            worker.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=600)
    parser.add_argument("--rate", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=2000)
    args = parser.parse_args()
    logs = Path(os.environ.get("BENCH_LOG_DIR", "/tmp"))
    llm_port = free_port()
    env = {**app_env(llm_port), "KNOWLEDGE_EMBED_IN_BACKGROUND": "1"}
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    prepare_database(env)
    runs: dict[str, list[dict]] = {}
    llm = [sys.executable, "bench/stream_llm.py", str(llm_port)]
    with serve(llm, llm_port, env, logs / "bench-embed-llm.log"):
        for n, mode in enumerate(MODES):
            token, ids = make_fixtures(args.streams)
            headers = {"Authorization": f"Bearer {token}"}
            uploader = {"Authorization": f"Bearer {make_fixtures(0)[0]}"}
            port = free_port()
            mode_env = {**env, "CHAT_TASKS": "database" if mode == "worker" else "immediate"}
            daphne = [sys.executable, "-m", "chatsite.serve", "-b", "127.0.0.1", "-p", str(port)]
            with (
                serve(
                    [*daphne, "chatsite.asgi:application"],
                    port,
                    mode_env,
                    logs / f"bench-embed-{mode}-{n}.log",
                ) as app,
                worker_for(mode, mode_env, logs / f"bench-embed-worker-{n}.log"),
            ):
                before = cpu_seconds(app.pid)
                result = asyncio.run(one_mode(mode, port, llm_port, headers, ids, args, uploader))
                result["web_cpu_s"] = round(cpu_seconds(app.pid) - before, 1)
            runs.setdefault(mode, []).append(result)
    out: dict = {"streams": args.streams, "tokens": args.tokens, "rate": args.rate}
    for mode, results in runs.items():
        out[mode] = [
            {
                "added_latency_p50_ms": r["streams"]["added_latency_p50_ms"],
                "added_latency_p99_ms": r["streams"]["added_latency_p99_ms"],
                "tokens_lost": r["streams"]["tokens_lost"],
                "web_cpu_s": r["web_cpu_s"],
                **r.get("document", {}),
            }
            for r in results
        ]
    p99 = {m: [r["added_latency_p99_ms"] for r in out[m]] for m in ("none", "thread", "worker")}
    worst_none = max(p99["none"])
    out["worker_no_worse"] = max(p99["worker"]) <= max(worst_none * 1.2, worst_none + 5)
    out["tokens_lost"] = sum(r["tokens_lost"] for m in ("none", "thread", "worker") for r in out[m])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
