"""Benchmark branching in a long conversation; print one JSON line.

A 1,000-message conversation is written through 500 real turns (the reply orchestrator,
the LangGraph agent with its PostgreSQL checkpointer, the offline model streaming at
full speed), then, alternated in one run: the time to the first token of a new message,
of a regenerate of the last reply, and of a regenerate of the second message (a branch
from near the root), each from the `start_reply` call to the first `token` frame on a
socket of the hub; then of a regenerate at turn 250 (a branch point in the middle of a
long path). Branching must start as fast as a normal reply: its memory is the thread's
one checkpoint, or rebuilt from a few rows (the nearest reply's ledger and its window),
not a replay. Needs PostgreSQL (a scratch database).

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/chatsite uv run python bench/branches.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scratch_db import run_in_scratch_database

BENCH_DB = "bench_branches"
TURNS = 500
SAMPLES = 7


class FirstToken:
    """A hub socket that notes when the first token frame of a run arrives."""

    token_id = None

    def __init__(self) -> None:
        self.first: float | None = None

    async def deliver(self, text: str, frame_type: str) -> None:
        if frame_type == "token" and self.first is None:
            self.first = time.perf_counter()

    async def close_with(self, code: int) -> None:
        """Nothing to close."""


def run(url: str) -> dict[str, object]:
    os.environ["DATABASE_URL"] = url
    os.environ.pop("REDIS_URL", None)
    os.environ.pop("OPENAI_API_KEY", None)
    os.environ["OFFLINE_MODEL_CHARS_PER_SECOND"] = "0"
    os.environ["CHAT_RATE_LIMIT"] = "100000/m"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return asyncio.run(measure())


async def measure() -> dict[str, object]:
    from asgiref.sync import sync_to_async
    from django.contrib.auth import get_user_model

    from agent.checkpoint import close_checkpointers
    from conversations import branches, services
    from conversations.models import Message
    from conversations.realtime.hub import aclose_hub, get_hub
    from conversations.replies import Ask, start_reply
    from core import rls

    user = await sync_to_async(get_user_model().objects.create_user)("bench", password="x")
    # Everything the bench asks of the app, it asks as its user: as on the app's socket
    # (conversations/consumers.py), in the user's RLS scope (core/rls.py).
    with rls.as_user(user.pk):
        conversation = await sync_to_async(services.create_conversation)(user=user, title="Long")
        hub = get_hub()

        async def timed(ask: Ask) -> tuple[float, Message]:
            sink = FirstToken()
            await hub.join(conversation.id, sink)
            started = time.perf_counter()
            reply = await (
                await start_reply(user=user, ask=ask, conversation_id=conversation.id)
            ).assistant_message()
            await hub.flushed(conversation.id)
            await hub.leave(conversation.id, sink)
            assert sink.first is not None and reply is not None
            return (sink.first - started) * 1000, reply

        built = time.perf_counter()
        turn_ms = []
        reply = None
        for n in range(TURNS):
            ms, reply = await timed(
                Ask.send(f"Message {n}: the weather, plans and a number {n * 7}.")
            )
            turn_ms.append(ms)
        build_s = time.perf_counter() - built
        messages = await Message.objects.filter(conversation=conversation).acount()
        second = await Message.objects.aget(conversation=conversation, sequence_number=2)
        middle = await Message.objects.aget(conversation=conversation, sequence_number=TURNS)

        send, regenerate_last = [], []
        for n in range(SAMPLES):  # alternated, so drift hits both alike
            ms, reply = await timed(Ask.send(f"One more question, number {n}."))
            send.append(ms)
            ms, reply = await timed(Ask.regenerate(reply.pk))
            regenerate_last.append(ms)
        regenerate_early, regenerate_middle = [], []
        leaf = reply.pk
        for _ in range(SAMPLES):
            ms, _early = await timed(Ask.regenerate(second.pk))
            regenerate_early.append(ms)
            await sync_to_async(branches.switch_branch)(user=user, message_id=leaf)
            ms, _middle = await timed(Ask.regenerate(middle.pk))
            regenerate_middle.append(ms)
            await sync_to_async(branches.switch_branch)(user=user, message_id=leaf)
    await aclose_hub()
    await close_checkpointers()

    def median(values: list[float]) -> float:
        return round(statistics.median(values), 1)

    return {
        "bench": "branches",
        "messages_in_conversation": messages,
        "build_s": round(build_s, 1),
        "first_turn_ttft_ms": round(turn_ms[0], 1),
        "turn_500_ttft_ms": round(turn_ms[-1], 1),
        "samples": SAMPLES,
        "send_ttft_ms": median(send),
        "regenerate_last_ttft_ms": median(regenerate_last),
        "regenerate_second_message_ttft_ms": median(regenerate_early),
        "regenerate_turn_250_ttft_ms": median(regenerate_middle),
        "regenerate_last_over_send": round(statistics.median(regenerate_last) / median(send), 2),
        "send_ttft_ms_all": [round(v, 1) for v in send],
        "regenerate_last_ttft_ms_all": [round(v, 1) for v in regenerate_last],
        "regenerate_second_ttft_ms_all": [round(v, 1) for v in regenerate_early],
        "regenerate_turn_250_ttft_ms_all": [round(v, 1) for v in regenerate_middle],
    }


def main() -> None:
    run_in_scratch_database(BENCH_DB, run)


if __name__ == "__main__":
    main()
