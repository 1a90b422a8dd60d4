"""Benchmark the list page, search and export on PostgreSQL; print one JSON line.

Creates its own database (chatsite_bench), fills it with USERS x CONVERSATIONS x MESSAGES
rows (mixed Korean and English) bulk-loaded with COPY, measures, then drops it.

`repetitions` times one search whose only hit repeats the word 1k, 2k and 16k times, and
one over a reply of about 1.27 MB; `ratio_16k_to_2k` is 8 when search is linear in the
text, 64 when it is quadratic.

List and search are measured with row-level security on (the app's role, the user's
scope: how the app runs) and off (the tables' owner, which RLS does not apply to), the
two interleaved sample by sample in one run on one warm connection (bench/rls_timing.py);
`rls_p95_ratio` is on / off. So is recall of older messages in the export's conversation
(EXPORT_MESSAGES long): a common word, and one that only three of its messages hold.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/chatsite uv run python bench/search.py
    BENCH_USERS=100 ... for a quick run
"""

from __future__ import annotations

import gc
import os
import random
import resource
import statistics
import sys
import time
import tracemalloc
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import rls_timing
from bench.scratch_db import run_in_scratch_database

USERS = int(os.environ.get("BENCH_USERS", 1000))
CONVERSATIONS = int(os.environ.get("BENCH_CONVERSATIONS", 100))  # per user
MESSAGES = int(os.environ.get("BENCH_MESSAGES", 20))  # per conversation
REPETITIONS = (1_000, 2_000, 16_000)
BIG_REPLY_CHARS = 1_270_000
EXPORT_MESSAGES = int(os.environ.get("BENCH_EXPORT_MESSAGES", 100_000))
# Each query runs this many times with RLS on and as many off (a p95 ratio of 200 samples
# moved by 10% from run to run).
SAMPLES = int(os.environ.get("BENCH_SAMPLES", 1000))
BENCH_DB = os.environ.get("BENCH_DB", "chatsite_bench")
SERVICES = ["", "minu-find", "minu-frame", "minu-build"]
NULL = "\\N"
ENGLISH = str.split(
    "the a we should plan review launch budget meeting notes deadline team design api search "
    "index query server client agent memory summary export import fork project report data "
    "model token stream socket cache user message thread window context cost risk quality "
    "test deploy metric customer feature release sprint backlog ticket issue bug fix today "
    "tomorrow next week because however maybe please thanks great idea question answer"
)
KOREAN = str.split(
    "회의가 회의를 회의록은 예산이 예산을 일정이 내일 오늘 다음 주에 프로젝트 검색 기능을 "
    "서버가 고객이 요청한 보고서를 작성해 주세요 감사합니다 좋습니다 확인했습니다 문제가 "
    "있습니다 배포는 테스트를 진행합니다 데이터를 분석하면 결과가 나왔어요 디자인을 검토 "
    "모델의 응답이 느립니다 요약을 부탁해요 메모리 사용량이 늘었습니다 비용을 줄이려면"
)


_POOL: dict[bool, list[str]] = {}


def sentence(rng: random.Random, korean: bool) -> str:
    """Return a random sentence (from a pool: generating 2 million one by one is slow)."""
    pool = _POOL.get(korean)
    if pool is None:
        words = KOREAN if korean else ENGLISH
        pool = _POOL[korean] = [
            " ".join(rng.choice(words) for _ in range(rng.randint(6, 18))) for _ in range(20_000)
        ]
    return pool[rng.randrange(len(pool))]


def rows_users(now: datetime):
    for i in range(1, USERS + 1):
        yield f"{i}\t!\t\\N\tf\tbench{i}\t\t\t\tf\tt\t{now.isoformat()}\n"


def load(conn: psycopg.Connection, rng: random.Random) -> dict[str, float]:
    """COPY users, conversations and messages; rebuild the message indexes afterwards."""
    now = datetime.now(UTC)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    with conn.cursor() as cur:
        cur.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = 'conversations_message'::regclass AND contype IN ('u', 'f')"
        )
        constraints = cur.fetchall()
        cur.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'conversations_message'"
            " AND indexname NOT IN (SELECT conname FROM pg_constraint"
            " WHERE conrelid = 'conversations_message'::regclass)"
        )
        indexes = cur.fetchall()
        for name, _ in constraints:
            cur.execute(f'ALTER TABLE conversations_message DROP CONSTRAINT "{name}"')
        for name, _ in indexes:
            cur.execute(f'DROP INDEX "{name}"')
        with cur.copy(
            "COPY auth_user (id, password, last_login, is_superuser, username, first_name,"
            " last_name, email, is_staff, is_active, date_joined) FROM STDIN"
        ) as copy:
            for line in rows_users(now):
                copy.write(line)
        cur.execute("SELECT setval('auth_user_id_seq', %s)", [USERS + 10])
        conversation_rows: list[tuple[str, int, datetime, bool]] = []
        with cur.copy(
            "COPY conversations_conversation (id, title, description, service_id, status,"
            " summary, summary_at, message_count, total_tokens_used, created_at, updated_at,"
            " last_message_at, archived_at, is_flagged, flag_reason, created_by_id,"
            " last_sequence_number, model, system_prompt, title_source, pinned, temporary)"
            " FROM STDIN"
        ) as copy:
            for user in range(1, USERS + 1):
                for _ in range(CONVERSATIONS):
                    cid = str(uuid.uuid4())
                    korean = rng.random() < 0.5
                    created = now - timedelta(minutes=rng.randint(60, 525_600))
                    last = created + timedelta(minutes=MESSAGES)
                    status = rng.choices(["active", "archived", "summarized"], [80, 15, 5])[0]
                    archived = last.isoformat() if status == "archived" else "\\N"
                    title = " ".join(rng.choice(KOREAN if korean else ENGLISH) for _ in range(4))
                    copy.write(
                        f"{cid}\t{title}\t\t{rng.choice(SERVICES)}\t{status}\t\t\\N\t{MESSAGES}"
                        f"\t{MESSAGES * 20}\t{created.isoformat()}\t{last.isoformat()}"
                        f"\t{last.isoformat()}\t{archived}\tf\t\t{user}\t{MESSAGES}\t\t\tuser\tf\tf\n"
                    )
                    conversation_rows.append((cid, user, created, korean))
        timings["copy_conversations_s"] = time.perf_counter() - started
        with cur.copy(
            "COPY conversations_message (id, conversation_id, role, content, parts, model,"
            " tokens_used, finish_reason, metadata, sequence_number, client_id, created_by_id,"
            " created_at, is_flagged, flag_reason) FROM STDIN"
        ) as copy:
            buffer: list[str] = []
            for cid, user, created, korean in conversation_rows:
                for seq in range(1, MESSAGES + 1):
                    is_user = seq % 2 == 1
                    buffer.append(
                        f"{uuid.uuid4()}\t{cid}\t{'user' if is_user else 'assistant'}"
                        f"\t{sentence(rng, korean)}\t[]\t{'' if is_user else 'offline'}"
                        f"\t{0 if is_user else 40}\t{'' if is_user else 'end_turn'}\t{{}}"
                        f"\t{seq}\t\\N\t{user if is_user else NULL}"
                        f"\t{(created + timedelta(minutes=seq)).isoformat()}\tf\t\n"
                    )
                if len(buffer) >= 20_000:
                    copy.write("".join(buffer))
                    buffer = []
            copy.write("".join(buffer))
        timings["copy_messages_s"] = time.perf_counter() - started
        cur.execute("SET maintenance_work_mem = '1GB'")
        cur.execute("SET max_parallel_maintenance_workers = 2")
        for _, definition in indexes:
            cur.execute(definition)
        for name, definition in constraints:
            cur.execute(f'ALTER TABLE conversations_message ADD CONSTRAINT "{name}" {definition}')
        cur.execute("ANALYZE")
    timings["load_total_s"] = time.perf_counter() - started
    return {k: round(v, 1) for k, v in timings.items()}


def measure_rls(query, users: list, rng: random.Random, samples: int) -> dict[str, object]:
    """Time `query(user)` with RLS on and off, alternating which goes first each sample."""
    return rls_timing.measure_rls(query, [(user.pk, user) for user in users], rng, samples)


def main() -> None:
    run_in_scratch_database(BENCH_DB, run)


def run(url: str) -> dict[str, object]:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from conversations import search
    from conversations.models import Conversation
    from transfers import exports

    rng = random.Random(42)
    call_command("migrate", verbosity=0)
    with psycopg.connect(url, autocommit=True) as conn:
        load_timings = load(conn, rng)
    users = list(get_user_model().objects.filter(username__startswith="bench"))
    cutoff = datetime.now(UTC) - timedelta(days=180)

    result: dict[str, object] = {
        "rows": {
            "users": USERS,
            "conversations": USERS * CONVERSATIONS,
            "messages": USERS * CONVERSATIONS * MESSAGES,
        },
        "load": load_timings,
        "list_default": measure_rls(
            lambda user: search.list_conversations(user=user), users, rng, SAMPLES
        ),
        "list_filtered": measure_rls(
            lambda user: search.list_conversations(
                user=user,
                status="active",
                service_id=SERVICES[1 + user.pk % 3],  # the same on both sides
                created_after=cutoff,
                sort="last_message_at",
            ),
            users,
            rng,
            SAMPLES,
        ),
        "list_q": measure_rls(
            lambda user: search.list_conversations(user=user, q="budget"), users, rng, SAMPLES
        ),
        "search_word": measure_rls(
            lambda user: search.search_messages(user=user, q="budget"), users, rng, SAMPLES
        ),
        "search_korean_substring": measure_rls(
            lambda user: search.search_messages(user=user, q="회의"), users, rng, SAMPLES
        ),
    }
    from core import rls

    result["repetitions"] = bench_repetitions(rng)
    with rls.as_user(users[0].pk):
        result["export"] = bench_export(url, users[0], Conversation, exports, rng)
    result.update(bench_recall(url, users[0], rng))
    lists = ("list_default", "list_filtered")
    searches = ("search_word", "search_korean_substring")
    recalls = ("recall_common_word", "recall_rare_word")
    on = {
        k: v["rls_on"]["p95_ms"] for k, v in result.items() if isinstance(v, dict) and "rls_on" in v
    }
    result["targets_met"] = {
        "list_p95_lt_50ms": max(on[k] for k in lists) < 50,
        "search_p95_lt_150ms": max(on[k] for k in searches) < 150,
        "rls_cost_lt_20pct": all(
            result[k]["rls_p95_ratio"] < 1.2 for k in (*lists, "list_q", *searches, *recalls)
        ),
        "export_peak_lt_64mb": result["export"]["tracemalloc_peak_mb"] < 64,
        "repetitions_ratio_lt_16": result["repetitions"]["ratio_16k_to_2k"] < 16,
    }
    return result


def bench_recall(url: str, user, rng: random.Random) -> dict[str, object]:
    """Time recall's search (conversations.replies.recall.find_older_messages) over the export's
    long conversation, RLS on and off: a common word, and one three messages hold."""
    from conversations.models import Conversation, Message
    from conversations.replies.recall import find_older_messages
    from core import rls

    with rls.as_user(user.pk):
        conversation = Conversation.objects.get(created_by=user, title="긴 대화 export")
        ids = list(Message.objects.filter(conversation=conversation).values_list("pk", flat=True))
        for pk in rng.sample(ids, 3):
            message = Message.objects.get(pk=pk)
            Message.objects.filter(pk=pk).update(content=message.content + " zebrafinch")
    with psycopg.connect(url, autocommit=True) as conn:
        # What autovacuum does in time: without it the planner thinks the conversation holds
        # 20 messages, not 100,000, before and after the search functions alike.
        conn.execute("ANALYZE conversations_message")
    samples = max(SAMPLES // 5, 50)  # each reads up to recall.MAX_CANDIDATES rows
    return {
        f"recall_{name}_word": rls_timing.measure_rls(
            lambda words: find_older_messages(conversation_id=conversation.pk, words=words),
            [(user.pk, words)],
            rng,
            samples,
        )
        for name, words in (("common", ["budget"]), ("rare", ["zebrafinch"]))
    }


def bench_repetitions(rng: random.Random) -> dict[str, float]:
    """Time a search whose one hit is a message repeating the word, or a ~1.27 MB reply."""
    from django.contrib.auth import get_user_model

    from conversations import search, services
    from conversations.models import Message
    from core import rls

    user = get_user_model().objects.create(username="bench_repetitions")
    figures: dict[str, float] = {}
    with rls.as_user(user.pk):
        conversation = services.create_conversation(user=user, title="repetitions")
        message = services.insert_message(
            conversation, services.NewMessage(role="assistant", content="budget")
        )

        def timed(content: str) -> float:
            Message.objects.filter(pk=message.pk).update(content=content)
            search.search_messages(user=user, q="budget")  # warm up
            samples = []
            for _ in range(3):
                started = time.perf_counter()
                [hit] = search.search_messages(user=user, q="budget").items
                samples.append(time.perf_counter() - started)
            assert "<mark>budget</mark>" in hit.snippet
            return round(statistics.median(samples), 4)

        for n in REPETITIONS:
            figures[f"reps_{n // 1000}k_s"] = timed(" ".join(["budget"] * n))
        big, size = [], 0
        while size < BIG_REPLY_CHARS:
            big.append(sentence(rng, len(big) % 2 == 0) + " budget.")
            size += len(big[-1]) + 1
        figures["reply_1_27mb_s"] = timed("\n".join(big)[:BIG_REPLY_CHARS])
    figures["ratio_16k_to_2k"] = round(figures["reps_16k_s"] / figures["reps_2k_s"], 1)
    return figures


def bench_export(url, user, Conversation, exports, rng) -> dict[str, float]:
    """Stream a JSON export of one EXPORT_MESSAGES-long conversation; time and memory."""
    conversation = Conversation.objects.create(created_by=user, title="긴 대화 export")
    start = datetime.now(UTC) - timedelta(days=100)
    with psycopg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        with cur.copy(
            "COPY conversations_message (id, conversation_id, role, content, parts, model,"
            " tokens_used, finish_reason, metadata, sequence_number, created_at, is_flagged,"
            " flag_reason) FROM STDIN"
        ) as copy:
            for seq in range(1, EXPORT_MESSAGES + 1):
                copy.write(
                    f"{uuid.uuid4()}\t{conversation.id}\t{'user' if seq % 2 else 'assistant'}"
                    f"\t{sentence(rng, seq % 3 == 0)}\t[]\t\t0\t\t{{}}\t{seq}"
                    f"\t{(start + timedelta(seconds=seq)).isoformat()}\tf\t\n"
                )
        cur.execute(
            "UPDATE conversations_conversation SET message_count = %s WHERE id = %s",
            [EXPORT_MESSAGES, conversation.id],
        )
    conversation.refresh_from_db()
    gc.collect()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    size = sum(len(chunk) for chunk in exports.iter_export(conversation, "json"))
    elapsed = time.perf_counter() - started
    rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    tracemalloc.start()
    for _ in exports.iter_export(conversation, "json", include_metadata=True):
        pass
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "messages": EXPORT_MESSAGES,
        "seconds": round(elapsed, 2),
        "messages_per_s": round(EXPORT_MESSAGES / elapsed),
        "bytes": size,
        "tracemalloc_peak_mb": round(peak / 2**20, 1),
        "max_rss_growth_mb": round(rss_growth / 1024, 1),
    }


if __name__ == "__main__":
    main()
