"""Benchmark the usage pages' queries and the budget check at 2 million messages; print one
JSON line.

Builds its own database (chatsite_usage_bench): BENCH_USAGE_USERS users with
BENCH_USAGE_CONVERSATIONS conversations each, BENCH_USAGE_MESSAGES messages per conversation
(every other one a reply with `metadata.usage`, one of four models), spread over the last
365 days, generated inside PostgreSQL (`generate_series`). The message table's GIN indexes
(search) are dropped first and not rebuilt: nothing measured here reads them.

Then the rollup is built the way production builds it: the migration's backfill over every
stored reply (timed), and `record_reply` as each stored reply calls it (timed). Then each
query is timed BENCH_SAMPLES times, with row-level security as in production: staff
queries in the maintenance scope (as /admin/usage/ and /api/v1/admin/usage run), the user's
page and the budget check in the user's own scope. p50/p95 per query, for this month (the
pages' default) and for the longest range allowed (366 days); `staff_page` is everything
the staff page runs, one after the other.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/chatsite uv run python bench/usage.py
"""

from __future__ import annotations

import os
import random
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.rls_timing import percentiles
from bench.scratch_db import run_in_scratch_database

USERS = int(os.environ.get("BENCH_USAGE_USERS", 1000))
CONVERSATIONS = int(os.environ.get("BENCH_USAGE_CONVERSATIONS", 50))  # per user
MESSAGES = int(os.environ.get("BENCH_USAGE_MESSAGES", 40))  # per conversation
SAMPLES = int(os.environ.get("BENCH_SAMPLES", 60))
BENCH_DB = os.environ.get("BENCH_DB", "chatsite_usage_bench")
TARGET_MS = 200
MODELS = ["gpt-4o", "gpt-4o-mini", "claude-sonnet", "llama-3.1-8b"]

USERS_SQL = """
INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,
                       is_staff, is_active, date_joined)
SELECT '!', false, 'bench' || n, '', '', '', n = 1, true, now() FROM generate_series(1, %s) n
"""
# Every other message a reply whose id is its run's (as the reply orchestrator stores it).
MESSAGES_SQL = """
INSERT INTO conversations_message (id, conversation_id, role, content, parts, model,
  tokens_used, finish_reason, metadata, sequence_number, created_at, is_flagged, flag_reason,
  run_id)
SELECT mid, cid, CASE WHEN reply THEN 'assistant' ELSE 'user' END, 'bench message', '[]',
       CASE WHEN reply THEN (%s::text[])[1 + floor(random() * 4)::int] ELSE '' END,
       CASE WHEN reply THEN out_tokens ELSE 0 END, CASE WHEN reply THEN 'end_turn' ELSE '' END,
       CASE WHEN reply THEN jsonb_build_object('usage', jsonb_build_object(
         'input_tokens', in_tokens, 'output_tokens', out_tokens)) ELSE '{}' END,
       s, created, false, '', CASE WHEN reply THEN mid END
FROM (
  SELECT gen_random_uuid() AS mid, c.id AS cid, s, s %% 2 = 0 AS reply,
         200 + floor(random() * 3000)::int AS in_tokens,
         20 + floor(random() * 800)::int AS out_tokens,
         c.created_at + s * interval '4 minutes' * (1 + abs(hashtext(c.id::text)) %% 40)
           AS created
  FROM conversations_conversation c CROSS JOIN generate_series(1, %s) s
) rows
"""


def make_conversations() -> None:
    """Create each user's conversations, made long ago up to now, through the ORM (defaults)."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from conversations.models import Conversation
    from core import rls

    rng = random.Random(7)
    now = timezone.now()
    with rls.maintenance():
        for user in get_user_model().objects.filter(username__startswith="bench"):
            rows = [
                Conversation(title=f"Conversation {n} of {user.username}", created_by=user)
                for n in range(CONVERSATIONS)
            ]
            created = Conversation.objects.bulk_create(rows)
            for row in created:
                row.created_at = now - timedelta(seconds=rng.randrange(365 * 86400))
            Conversation.objects.bulk_update(created, ["created_at"])


def build(url: str) -> dict[str, Any]:
    """Fill the database with users, conversations and messages; return counts and times."""
    import psycopg

    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(USERS_SQL, [USERS])
    make_conversations()
    with psycopg.connect(url, autocommit=True) as conn:
        for (name,) in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'conversations_message'"
            " AND indexdef LIKE '%USING gin%'"
        ).fetchall():
            conn.execute(f'DROP INDEX "{name}"')
        conn.execute(MESSAGES_SQL, [MODELS, MESSAGES])
        conn.execute("ANALYZE")
        messages = conn.execute("SELECT count(*) FROM conversations_message").fetchone()[0]
    return {"messages": messages, "load_s": round(time.perf_counter() - started, 1)}


def timed(query: Callable[[], Any], samples: int = SAMPLES) -> dict[str, float]:
    """Time `query()` `samples` times after one warm-up call."""
    query()
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        query()
        times.append(time.perf_counter() - started)
    return percentiles(times)


def backfill_and_record(rng: random.Random, users: list[Any]) -> dict[str, Any]:
    """Build the rollup as the migration does, then time `record_reply` as a reply does."""
    from django.db import connection, transaction
    from django.utils import timezone

    from core import rls
    from usage import services
    from usage.backfill import backfill
    from usage.models import UsageRollup

    started = time.perf_counter()
    with rls.owner_mode(), transaction.atomic(), connection.cursor() as cursor:
        backfill(cursor)
    backfill_s = round(time.perf_counter() - started, 1)

    def record() -> None:
        user = rng.choice(users)
        with rls.as_user(user.pk), transaction.atomic():
            services.record_reply(
                user_id=user.pk,
                conversation_id=uuid.uuid4(),
                model=rng.choice(MODELS),
                metadata={"usage": {"input_tokens": 1000, "output_tokens": 200}},
                at=timezone.now(),
            )

    recorded = timed(record)
    with rls.maintenance():
        rows = UsageRollup.objects.count()
    return {"backfill_s": backfill_s, "rollup_rows": rows, "record_reply": recorded}


def measure_range(users: list[Any], rng: random.Random, start: Any, end: Any) -> dict[str, Any]:
    """Time the staff page's queries and the user's page over one range of days."""
    from core import rls
    from usage import exports, selectors

    span = {"start": start, "end": end}

    def staff(query: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            with rls.maintenance():  # as /admin/usage/ runs
                return query()

        return run

    by = {
        group: staff(lambda g=group: selectors.staff_usage(group=g, **span))
        for group in ("user", "model", "day")
    }
    top = staff(lambda: selectors.top_conversations(**span))
    csv = staff(lambda: exports.report_csv(selectors.staff_usage(group="user", **span)))

    def page() -> None:
        for query in (*by.values(), top):
            query()

    def mine(group: str) -> Callable[[], Any]:
        def run() -> Any:
            user = rng.choice(users)
            with rls.as_user(user.pk):  # as /usage/ runs
                return selectors.user_usage(user_id=user.pk, group=group, **span)

        return run

    return {
        **{f"staff_by_{group}": timed(query) for group, query in by.items()},
        "staff_top_conversations": timed(top),
        "staff_csv": timed(csv),
        "staff_page": timed(page),
        "user_by_day": timed(mine("day")),
        "user_by_model": timed(mine("model")),
    }


def measure(users: list[Any], rng: random.Random) -> dict[str, Any]:
    """Time each query for this month and the longest range, and the budget check."""
    from django.db import transaction

    from core import rls
    from usage import services
    from usage.schemas import MAX_SPAN_DAYS

    today = datetime.now(UTC).date()
    results: dict[str, Any] = {
        "month": measure_range(users, rng, today.replace(day=1), today),
        "year": measure_range(users, rng, today - timedelta(days=MAX_SPAN_DAYS - 1), today),
    }

    def check() -> None:
        user = rng.choice(users)
        with rls.as_user(user.pk), transaction.atomic():  # as a reply's claim runs it
            services.check_budget(user=user)

    results["budget_check"] = timed(check)
    return results


def p95s(results: dict[str, Any]) -> list[float]:
    found = []
    for value in results.values():
        if isinstance(value, dict) and "p95_ms" in value:
            found.append(value["p95_ms"])
        elif isinstance(value, dict):
            found += p95s(value)
    return found


def run(url: str) -> dict[str, object]:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    from core import rls
    from usage.models import Budget

    rng = random.Random(36)
    call_command("migrate", verbosity=0)
    built = build(url)
    with rls.maintenance():
        users = list(get_user_model().objects.filter(username__startswith="bench"))
        for n, tokens in enumerate((5_000_000, 20_000_000, 0)):  # group budgets, as in teams
            group = Group.objects.create(name=f"team {n}")
            group.user_set.add(*users[n::3])
            Budget.objects.create(group=group, monthly_tokens=tokens)
    rollup = backfill_and_record(rng, users)
    queries = measure(users, rng)
    # The target is per query; `staff_page` (all of the page's queries in a row) is shown
    # beside it, not counted.
    singles = {
        name: value if "p95_ms" in value else {k: v for k, v in value.items() if k != "staff_page"}
        for name, value in queries.items()
    }
    worst = max(p95s(singles))
    return {
        "bench": "usage",
        **built,
        **rollup,
        "samples": SAMPLES,
        "queries": queries,
        "worst_p95_ms": worst,
        "targets": {"p95_le_200ms": worst <= TARGET_MS},
    }


def main() -> None:
    run_in_scratch_database(BENCH_DB, run)


if __name__ == "__main__":
    main()
