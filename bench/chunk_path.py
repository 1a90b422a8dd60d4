"""What one chunk of a streaming reply costs the server process between the model's text
and the sockets, without the network on either side: prints one JSON line.

N replies (100) of T chunks (300) at R chunks a second (20) stream at once through the
real coalescer, hub and reply progress record in Redis, into sockets that take each frame
and do nothing with it; the process reads its own CPU time. Measured in one run, in turn:
the same loop posting nothing (`idle`: the harness's own timers), the whole path (`full`),
and the path with the Redis record answered at once (`without_record`); each `*_us` is CPU
per chunk with the idle cost taken off. Pin it to one core for steadier figures
(`taskset -c 0`). REDIS_URL (default db 11).

    uv run python bench/chunk_path.py [--replies 100] [--chunks 300] [--rate 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/11")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")

import django  # noqa: E402

django.setup()

import uvloop  # noqa: E402

from conversations import events  # noqa: E402
from conversations.realtime import progress  # noqa: E402
from conversations.realtime.coalescer import Coalescer  # noqa: E402
from conversations.realtime.hub import get_hub  # noqa: E402


class Socket:
    """Takes every frame and does nothing with it."""

    frames = 0

    async def deliver(self, text: str, frame_type: str) -> None:
        Socket.frames += 1


async def reply(hub, args, mode: str, ready: list[asyncio.Event], go: asyncio.Event) -> int:
    conversation, run, question = str(uuid.uuid4()), uuid.uuid4(), str(uuid.uuid4())
    hub.enter(conversation, Socket())
    await progress.astart(conversation_id=conversation, run_id=run, reply_to=question)

    def post(frame, append, on_sent) -> None:
        hub.post(conversation, frame, append=append, on_sent=on_sent)

    coalescer = Coalescer(run_id=str(run), reply_to=question, post=post, token=events.token)
    ready.pop().set()
    await go.wait()
    await asyncio.sleep(random.random() / args.rate)  # the replies' chunks spread out
    for k in range(args.chunks):
        if mode != "idle":
            coalescer.add_token(f"w{k} ")
        await asyncio.sleep(1 / args.rate)
    coalescer.flush()
    await hub.flushed(conversation)
    await progress.aclear(conversation_id=conversation, run_id=run)
    return coalescer.chunks


async def measure(args, mode: str) -> float:
    """Return the CPU seconds of one pass (the replies' setup left out)."""
    hub, go = get_hub(), asyncio.Event()
    ready = [asyncio.Event() for _ in range(args.replies)]
    waits = [event.wait() for event in ready]
    real = progress.record
    if mode == "without_record":

        def record(*, conversation_id, append, then=None) -> None:
            if then is not None:
                then()

        progress.record = record
    try:
        tasks = [
            asyncio.ensure_future(reply(hub, args, mode, ready, go)) for _ in range(args.replies)
        ]
        await asyncio.gather(*waits)
        await asyncio.sleep(0.5)  # connections made, the loop quiet
        started = time.process_time()
        go.set()
        await asyncio.gather(*tasks)
        return time.process_time() - started
    finally:
        progress.record = real


async def main(args) -> None:
    chunks = args.replies * args.chunks
    cpu = {mode: await measure(args, mode) for mode in ("idle", "full", "without_record")}
    per = {mode: round((cpu[mode] - cpu["idle"]) * 1e6 / chunks, 1) for mode in cpu}
    print(
        json.dumps(
            {
                "replies": args.replies,
                "chunks": args.chunks,
                "rate": args.rate,
                "idle_us": round(cpu["idle"] * 1e6 / chunks, 1),
                "full_us": per["full"],
                "without_record_us": per["without_record"],
                "record_us": round(per["full"] - per["without_record"], 1),
                "frames": Socket.frames,
            }
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replies", type=int, default=100)
    parser.add_argument("--chunks", type=int, default=300)
    parser.add_argument("--rate", type=float, default=20.0)
    uvloop.run(main(parser.parse_args()))
