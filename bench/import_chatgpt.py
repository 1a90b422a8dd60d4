"""Benchmark importing a 100 MB ChatGPT export through a real Daphne process; one JSON line.

A ChatGPT data export's `conversations.json` is one JSON array of every conversation a
user had. The file here is generated in that shape (each conversation a `mapping` tree
with a system root, edits as sibling branches, a hidden tool call, Korean and English
text) until it reaches `--mb`, then uploaded as a browser does (multipart `file`) to
`POST /api/v1/conversations/import`. Measured: the time to the 201, what was stored, and
the Daphne process's resident memory before and at its peak during the import (sampled
every 20 ms from /proc). Target: the import grows the server by less than 256 MB (the
peak is printed beside it: Daphne queues a request's whole body for the application
before it runs, ~0.87 MB per MB uploaded; the import itself reads one conversation at a
time). It runs on a scratch PostgreSQL database made from DATABASE_URL and dropped after.

    uv run python bench/import_chatgpt.py [--mb 100]
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.processes import daphne_command, free_port, migrated_django, rss_mb, serve  # noqa: E402
from bench.scratch_db import main_with  # noqa: E402

TARGET_GROWTH_MB = 256
ENGLISH = "plan trip budget Busan Seoul train hotel recipe kimchi code python django"
KOREAN = "부산 여행 예산 기차 호텔 요리 김치찌개 코드 배포 회의 일정 정리 다음 주 확인"
WORDS = [*ENGLISH.split(" "), *KOREAN.split(" ")]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + "."


def _node(node_id: str, parent: str | None, role: str, text: str, at: float, **extra) -> dict:
    message = {
        "id": node_id,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": at,
        "update_time": None,
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully",
        "end_turn": role == "assistant",
        "weight": 1.0,
        "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
        "recipient": "all",
    } | extra
    return {"id": node_id, "message": message, "parent": parent, "children": []}


def _conversation(rng: random.Random, n: int) -> dict:
    start = 1_700_000_000 + n * 3600.0
    mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    parent, leaf = "root", "root"
    turns = rng.randint(4, 30)
    for t in range(turns):
        q, a = f"{n}-q{t}", f"{n}-a{t}"
        mapping[q] = _node(q, parent, "user", _text(rng, rng.randint(5, 60)), start + t * 60)
        mapping[a] = _node(a, q, "assistant", _text(rng, rng.randint(20, 300)), start + t * 60 + 5)
        mapping[parent]["children"].append(q)
        mapping[q]["children"].append(a)
        if rng.random() < 0.1:  # an edit: a second version of the question, answered
            e, r = f"{n}-e{t}", f"{n}-r{t}"
            mapping[e] = _node(e, parent, "user", _text(rng, 20), start + t * 60 + 30)
            mapping[r] = _node(r, e, "assistant", _text(rng, 80), start + t * 60 + 35)
            mapping[parent]["children"].append(e)
            mapping[e]["children"].append(r)
        if rng.random() < 0.1:  # a tool call and its result, hidden in the app
            c, o = f"{n}-c{t}", f"{n}-o{t}"
            mapping[c] = _node(c, a, "assistant", "search('x')", start + t * 60 + 6)
            mapping[c]["message"]["recipient"] = "browser"
            mapping[o] = _node(o, c, "tool", "results", start + t * 60 + 7)
            mapping[a]["children"].append(c)
            mapping[c]["children"].append(o)
        parent = leaf = a
    return {
        "title": _text(rng, 4)[:60],
        "create_time": start,
        "update_time": start + turns * 60,
        "mapping": mapping,
        "current_node": leaf,
        "conversation_id": f"conv-{n}",
        "default_model_slug": "gpt-4o",
    }


def make_export(path: Path, megabytes: int) -> dict[str, int]:
    """Write a ChatGPT-shaped conversations.json of about `megabytes` MB."""
    rng = random.Random(7)
    target = megabytes * 1_000_000
    written, count, nodes = 0, 0, 0
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        while written < target:
            conversation = _conversation(rng, count)
            chunk = ("," if count else "") + json.dumps(conversation, ensure_ascii=False)
            out.write(chunk)
            written += len(chunk.encode())
            nodes += len(conversation["mapping"])
            count += 1
        out.write("]")
    return {"conversations": count, "nodes": nodes, "bytes": path.stat().st_size}


def _seed(database_url: str) -> str:
    migrated_django(database_url)
    from django.contrib.auth import get_user_model

    from accounts.tokens import create_api_token
    from core import rls

    user = get_user_model().objects.create_user("bench", password="bench-import-1")
    with rls.as_user(user.pk):  # the user's own token (PostgreSQL row-level security)
        return create_api_token(user=user, name="bench").secret


def run(database_url: str, megabytes: int) -> dict[str, object]:
    path = ROOT / "var" / "bench-chatgpt-conversations.json"
    made = make_export(path, megabytes)
    token = _seed(database_url)
    from django.db import connections

    connections.close_all()
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "chatsite.settings",
        # As deployed: DEBUG keeps every SQL statement in memory (9,000 of them).
        "DJANGO_DEBUG": "0",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SECRET_KEY": "bench-import-not-secret-bench-import-not-secret-0123456789",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
    }
    env.pop("REDIS_URL", None)
    log = ROOT / "var" / "bench-import-daphne.log"
    try:
        with serve(daphne_command(port), port, env, log) as proc:
            before = rss_mb(proc.pid)
            peak = [before]
            done = threading.Event()

            def sample() -> None:
                while not done.is_set():
                    peak[0] = max(peak[0], rss_mb(proc.pid))
                    time.sleep(0.02)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            started = time.perf_counter()
            with path.open("rb") as file:
                response = httpx.post(
                    f"http://127.0.0.1:{port}/api/v1/conversations/import",
                    headers={"Authorization": f"Bearer {token}"},
                    files={"file": ("conversations.json", file, "application/json")},
                    timeout=1800,
                )
            seconds = time.perf_counter() - started
            done.set()
            sampler.join()
            if response.status_code != 201:
                raise RuntimeError(f"import answered {response.status_code}: {response.text[:300]}")
            items = response.json()["items"]
            stored = sum(c["message_count"] for c in items)
            return {
                "file_mb": round(made["bytes"] / 1e6, 1),
                "conversations_in_file": made["conversations"],
                "nodes_in_file": made["nodes"],
                "conversations_imported": len(items),
                "messages_imported": stored,
                "seconds": round(seconds, 1),
                "mb_per_second": round(made["bytes"] / 1e6 / seconds, 1),
                "rss_before_mb": round(before, 1),
                "rss_peak_mb": round(peak[0], 1),
                "rss_growth_mb": round(peak[0] - before, 1),
                "target_growth_mb": TARGET_GROWTH_MB,
                "within_target": peak[0] - before < TARGET_GROWTH_MB,
            }
    finally:
        path.unlink(missing_ok=True)


def main() -> None:
    main_with("chatsite_bench_import", __doc__, "--mb", 100, run)


if __name__ == "__main__":
    main()
