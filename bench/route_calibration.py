"""Calibrate routing to the user's documents without the model; print one JSON line.

The user has the test corpus (tests/knowledge/corpus/: an English handbook and a Korean
취업규칙). For its 40 questions (on topic) and 60 everyday chat messages (off topic, a
third of them sharing words with the handbook on purpose) this reads the best passage's
`overlap` (share of the question's words it holds) and `score`, and reports, per
threshold, the share of on-topic questions routed to the documents (recall) and of
off-topic ones wrongly routed there (false positives). agent/nodes/route.py uses:
- STRONG_OVERLAP: sent to the documents without asking the model (no false positive);
- SCORE_THRESHOLD: when the model cannot decide, the documents answer at or above it.

    uv run python bench/route_calibration.py            # SQLite, in a temporary directory
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/chatsite \
        uv run python bench/route_calibration.py        # PostgreSQL, in a scratch database
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

OFF_TOPIC = [
    # everyday chat, coding, knowledge, arithmetic
    "Write a haiku about autumn rain.",
    "What's the capital of Australia?",
    "How do I reverse a list in Python?",
    "Explain the difference between TCP and UDP.",
    "Can you recommend a good sci-fi novel?",
    "What is 345 times 12?",
    "Translate 'good morning' into Spanish.",
    "Why is the sky blue?",
    "Give me a recipe for pancakes.",
    "Summarize the plot of Hamlet in three sentences.",
    "What does a JavaScript closure do?",
    "How tall is Mount Everest?",
    "Help me write a birthday message for my sister.",
    "What are some tips for sleeping better?",
    "Who painted the Mona Lisa?",
    "How do I center a div in CSS?",
    "What's a good name for a golden retriever puppy?",
    "Explain recursion to a ten-year-old.",
    "파이썬에서 딕셔너리를 정렬하는 방법 알려줘",
    "오늘 저녁 메뉴 추천해 줘",
    "서울에서 부산까지 KTX로 얼마나 걸려?",
    "광합성이 뭐야?",
    "영어 이메일 첫 문장을 자연스럽게 고쳐 줘",
    "고양이가 밤에 우는 이유가 뭐야?",
    "김치찌개 맛있게 끓이는 법",
    "삼각형 넓이 공식 알려줘",
    "비 오는 날 듣기 좋은 노래 추천해 줘",
    "자바스크립트에서 배열 중복 제거하는 법",
    "세종대왕은 어떤 업적이 있어?",
    "운동 후에 단백질을 언제 먹는 게 좋아?",
    "감기 걸렸을 때 좋은 차가 뭐가 있어?",
    "주말에 가볼 만한 서울 근교 여행지",
    "시를 한 편 써 줘. 주제는 바다",
    "SQL에서 JOIN 종류 설명해 줘",
    "달까지 거리가 얼마야?",
    "아이한테 공룡 이야기 들려줘",
    "What's the weather usually like in Lisbon in May?",
    "How do I make my resume stand out?",
    "What is the meaning of life?",
    "Tell me a joke about programmers.",
    # tricky: they share words with the handbook (leave, days, holiday, travel, work...)
    "What day is it today?",
    "회사 그만두고 싶어",
    "Tell me about your plans for a day off.",
    "How do I request a refund from Amazon?",
    "연차라는 단어의 뜻이 뭐야?",
    "Which public holidays does France have?",
    "Plan a two-week travel itinerary for Japan.",
    "How do I ask my landlord to fix the heating?",
    "My laptop is slow, how can I speed it up?",
    "How do I write a good performance review for a colleague?",
    "Is it healthy to work from bed?",
    "What should I pack for a business trip to Seoul?",
    "출장 갈 때 챙길 물건 목록 만들어 줘",
    "친구 결혼식 축사 써 줘",
    "재택근무할 때 집중 잘 되는 음악 추천",
    "야근하고 나서 피곤할 때 먹으면 좋은 음식",
    "육아에 도움이 되는 책 추천해 줘",
    "비밀번호를 안전하게 만드는 방법",
    "How many vacation days do Americans usually take?",
    "What is sick leave in general?",
]
OVERLAPS = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0]
SCORES = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


def setup(database_url: str | None, var: str) -> None:
    os.environ["CHAT_VAR_DIR"] = var
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    else:
        os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def measure() -> dict[str, object]:
    from django.contrib.auth import get_user_model

    from agent.nodes.retrieve import TOP_K
    from agent.nodes.route import SCORE_THRESHOLD, STRONG_OVERLAP
    from core import rls
    from knowledge.retrieval import retrieve
    from tests.knowledge.recall import load_questions, upload_corpus

    user = get_user_model().objects.create_user("calibration")
    with rls.as_user(user.pk):  # the user's own rows (PostgreSQL row-level security)
        upload_corpus(user)

    def top(question: str) -> tuple[float, float]:
        with rls.as_user(user.pk):
            hits = retrieve(user_id=user.pk, query=question, k=TOP_K)
        if not hits:
            return 0.0, 0.0
        return max(h["overlap"] for h in hits), hits[0]["score"]

    on = [top(item["q"]) for item in load_questions()]
    off = [top(q) for q in OFF_TOPIC]

    def rates(index: int, thresholds: list[float]) -> dict[str, dict[str, float]]:
        return {
            str(t): {
                "recall": round(sum(x[index] >= t for x in on) / len(on), 3),
                "false_positive": round(sum(x[index] >= t for x in off) / len(off), 3),
            }
            for t in thresholds
        }

    worst_off = sorted(
        ((q, o, s) for q, (o, s) in zip(OFF_TOPIC, off, strict=True)),
        key=lambda row: -row[1],
    )[:5]
    chosen = {"overlap": STRONG_OVERLAP, "score": SCORE_THRESHOLD}
    return {
        "chosen": {
            name: {"threshold": t, **rates(index, [t])[str(t)]}
            for index, (name, t) in enumerate(chosen.items())
        },
        "questions": len(on),
        "off_topic": len(off),
        "overlap": rates(0, OVERLAPS),
        "score": rates(1, SCORES),
        "off_topic_highest_overlap": [{"q": q, "overlap": o, "score": s} for q, o, s in worst_off],
        "on_topic_lowest_score": sorted(round(s, 3) for _, s in on)[:5],
    }


def main() -> None:
    url = os.environ.get("DATABASE_URL", "")
    with tempfile.TemporaryDirectory() as var:
        if url.startswith("postgres"):
            from bench.scratch_db import run_in_scratch_database

            def run(scratch_url: str) -> dict[str, object]:
                setup(scratch_url, var)
                return {"bench": "route_calibration", "database": "postgresql", **measure()}

            run_in_scratch_database("chatsite_bench_route", run)
        else:
            setup(None, var)
            result = {"bench": "route_calibration", "database": "sqlite", **measure()}
            print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
