"""Benchmark exports through a real Daphne process; one JSON line.

The text exports stream (an async iterator under ASGI): the server's resident memory
should grow by less than 64 MB however long the conversation is (100,000 messages). The
PDF of a 500-message conversation with Korean, code and math should take at most 5 s
and grow the server by at most 64 MB too. Measured: the Daphne process's RSS before the
download and its peak while downloading (sampled every 20 ms from /proc), the bytes
received, and the time taken, for each format.

Needs PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/chatsite; a
scratch database is made and dropped).

    uv run python bench/export.py [--messages 100000]
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.processes import daphne_command, free_port, migrated_django, rss_mb, serve  # noqa: E402
from bench.scratch_db import main_with  # noqa: E402

TARGET_GROWTH_MB = 64
PDF_MESSAGES = 500
PDF_TARGET_SECONDS = 5.0
PDF_REPLY = (
    "## 일정과 예산\n\n1. 해운대 — 바다\n2. 감천문화마을\n\n| 항목 | 비용 |\n|---|---|\n"
    "| 기차 | 12만원 |\n| 호텔 | 20만원 |\n\n```python\ndef total(items):\n"
    "    return sum(items)  # 합계\n```\n\nThe total is $\\sum_i c_i$, and "
    "$$\\frac{500000}{3} \\approx 166667$$ per day. **Bold**, *italic*, `code`."
)


def _seed(database_url: str, messages: int) -> tuple[str, str, str]:
    """Migrate, then make a user, a token, a conversation of `messages` messages and the
    PDF's conversation."""
    migrated_django(database_url)
    from django.contrib.auth import get_user_model

    from accounts.tokens import create_api_token
    from conversations.models import Conversation, Message
    from core import rls

    user = get_user_model().objects.create_user("bench", password="bench-export-1")
    with rls.as_user(user.pk):  # the user's own rows (PostgreSQL row-level security)
        conversation = Conversation.objects.create(created_by=user, title="Long export")
        text = "A message of ordinary length, with 한국어 too, and a little more text. " * 4
        batch = []
        previous = None
        for n in range(1, messages + 1):
            role = "user" if n % 2 else "assistant"
            # One branch (each message answers the one before): Markdown and text export
            # the current branch, which would otherwise be the last message alone.
            previous = Message(
                conversation=conversation,
                role=role,
                content=f"{n}: {text}",
                sequence_number=n,
                parent=previous,
            )
            batch.append(previous)
            if len(batch) == 5000:
                Message.objects.bulk_create(batch)
                batch = []
        Message.objects.bulk_create(batch)
        Conversation.objects.filter(pk=conversation.pk).update(
            message_count=messages, last_sequence_number=messages, current_message=previous
        )
        pdf_id = _seed_pdf_conversation(user)
        return create_api_token(user=user, name="bench").secret, str(conversation.pk), pdf_id


def _seed_pdf_conversation(user) -> str:
    """A conversation of PDF_MESSAGES messages: Korean questions, replies with a heading,
    a list, a table, code and math."""
    from conversations.models import Conversation, Message

    conversation = Conversation.objects.create(created_by=user, title="부산 여행 계획")
    previous, rows = None, []
    for n in range(1, PDF_MESSAGES + 1):
        text = f"{n}: 부산 2박 3일 여행 계획을 세워줘." if n % 2 else f"{n}: {PDF_REPLY}"
        previous = Message(
            conversation=conversation,
            role="user" if n % 2 else "assistant",
            content=text,
            sequence_number=n,
            parent=previous,
        )
        rows.append(previous)
    Message.objects.bulk_create(rows)
    Conversation.objects.filter(pk=conversation.pk).update(
        message_count=PDF_MESSAGES, last_sequence_number=PDF_MESSAGES, current_message=previous
    )
    return str(conversation.pk)


async def _download(url: str, token: str, pid: int) -> dict[str, float]:
    peak, received = rss_mb(pid), 0
    started = time.perf_counter()
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(timeout=600) as client,
        client.stream("GET", url, headers=headers) as response,
    ):
        response.raise_for_status()
        last = 0.0
        async for chunk in response.aiter_bytes():
            received += len(chunk)
            now = time.perf_counter()
            if now - last > 0.02:
                peak, last = max(peak, rss_mb(pid)), now
    return {"bytes": received, "seconds": round(time.perf_counter() - started, 2), "peak": peak}


def run(database_url: str, messages: int) -> dict[str, object]:
    token, conversation_id, pdf_id = _seed(database_url, messages)
    from django.db import connections

    connections.close_all()
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "chatsite.settings",
    }
    env.pop("REDIS_URL", None)
    with serve(daphne_command(port), port, env, ROOT / "var" / "bench-export-daphne.log") as proc:
        base = f"http://127.0.0.1:{port}/api/v1/conversations/{conversation_id}/export"
        results: dict[str, object] = {"messages": messages, "target_growth_mb": TARGET_GROWTH_MB}
        for fmt in ("json", "markdown", "text"):
            before = rss_mb(proc.pid)
            got = asyncio.run(_download(f"{base}?format={fmt}&include_metadata=1", token, proc.pid))
            results[fmt] = {
                "mb": round(got["bytes"] / 1e6, 1),
                "seconds": got["seconds"],
                "rss_before_mb": round(before, 1),
                "rss_peak_mb": round(got["peak"], 1),
                "rss_growth_mb": round(got["peak"] - before, 1),
            }
        growth = max(r["rss_growth_mb"] for r in results.values() if isinstance(r, dict))
        results["max_rss_growth_mb"] = growth
        results["within_target"] = growth < TARGET_GROWTH_MB
        pdf_url = f"http://127.0.0.1:{port}/api/v1/conversations/{pdf_id}/export?format=pdf"
        runs = []
        for _ in range(3):  # the first also loads fpdf2 and parses the fonts
            before = rss_mb(proc.pid)
            got = asyncio.run(_download(pdf_url, token, proc.pid))
            runs.append((got, before))
        seconds = sorted(got["seconds"] for got, _before in runs)
        growth = [got["peak"] - before for got, before in runs]
        results["pdf"] = {
            "messages": PDF_MESSAGES,
            "kb": round(runs[0][0]["bytes"] / 1e3),
            "seconds_first": runs[0][0]["seconds"],
            "seconds_median": seconds[1],
            # The first export also imports fpdf2 and fontTools (loaded on first use).
            "rss_growth_first_mb": round(growth[0], 1),
            "rss_growth_mb": round(max(growth[1:]), 1),
            "within_seconds": seconds[-1] <= PDF_TARGET_SECONDS,
            "within_memory": max(growth[1:]) <= TARGET_GROWTH_MB,
        }
        return results


def main() -> None:
    main_with("chatsite_bench_export", __doc__, "--messages", 100_000, run)


if __name__ == "__main__":
    main()
