"""Routing to the user's documents with a model that never calls functions; one JSON line.

The user has the test corpus (tests/knowledge/corpus/: an English handbook and a Korean
취업규칙). On topic: its 40 questions and `routing_questions.json` (206 more: paraphrases,
short ones like "연차는?", English/Korean mixes, questions in the other language). Off
topic: 60 everyday messages here and `off_topic.json` (183 more; about half share words
with the handbook on purpose). Each question is routed as agent/nodes/route.py does when
the model cannot decide: the text rules, then STRONG_OVERLAP, then retrieval's evidence
(the keyword `score`, and — in the grid — the dense `similarity`). Reported: the share of
on-topic questions whose passage reaches the request (routed to the documents *and* among
the TOP_K passages), the share of off-topic ones routed to the documents, and whether
retrieval finds the passage at all. Targets (issue 33): ≥ 0.95 and ≤ 0.05.

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
SCORES = [0.3, 0.4, 0.5, 0.6, 0.8]
SIMILARITIES = [0.3, 0.35, 0.4, 0.45]
FLOORS = [0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5]


def setup(database_url: str | None, var: str) -> None:
    os.environ["CHAT_VAR_DIR"] = var
    os.environ["KNOWLEDGE_EMBED_IN_BACKGROUND"] = "0"  # every chunk embedded before measuring
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
    from agent.nodes.route import SCORE_THRESHOLD, STRONG_OVERLAP, route_by_rules
    from core import rls
    from knowledge.hybrid import KEYWORD_MIN_SCORE, SIMILARITY_FLOOR, retrieve
    from tests.knowledge.recall import CORPUS_DIR, load_questions, upload_corpus

    user = get_user_model().objects.create_user("calibration")
    with rls.as_user(user.pk):  # the user's own rows (PostgreSQL row-level security)
        documents = upload_corpus(user)
    on_topic = load_questions() + json.loads(
        (CORPUS_DIR / "routing_questions.json").read_text(encoding="utf-8")
    )
    off_topic = OFF_TOPIC + json.loads((CORPUS_DIR / "off_topic.json").read_text(encoding="utf-8"))

    def evidence(question: str) -> dict[str, object]:
        with rls.as_user(user.pk):
            hits = retrieve(user_id=user.pk, query=question, k=TOP_K)
        return {
            "overlap": max((h["overlap"] for h in hits), default=0.0),
            "score": max((h["score"] for h in hits), default=0.0),
            "similarity": max((h.get("similarity") or 0.0 for h in hits), default=0.0),
            "passages": [(h["document_id"], h["section"]) for h in hits],
            "hits": [
                ((h["document_id"], h["section"]), h["score"], h.get("similarity") or 0.0)
                for h in hits
            ],
            "rule": route_by_rules(question, True),
        }

    on = [(item, evidence(item["q"])) for item in on_topic]
    off = [(q, evidence(q)) for q in off_topic]

    def to_documents(e: dict, score: float, similarity: float) -> bool:
        """Routing with a model that never calls functions (agent/nodes/route.py): a rule,
        then the keyword overlap, then retrieval's own evidence."""
        if e["rule"] is not None:
            return e["rule"][0] == "rag"
        if e["overlap"] >= STRONG_OVERLAP:
            return True
        return e["score"] >= score or e["similarity"] >= similarity

    def outcome(score: float, similarity: float) -> dict[str, float]:
        served = sum(
            to_documents(e, score, similarity)
            and (documents[item["document"]], item["section"]) in e["passages"]
            for item, e in on
        )
        wrong = sum(to_documents(e, score, similarity) for _, e in off)
        return {
            "passage_sent": round(served / len(on), 3),
            "off_topic_sent": round(wrong / len(off), 3),
        }

    def with_a_no_voter(e: dict, *, evidence_first: bool) -> bool:
        """Routing with a model that can answer and always votes "no documents" (as small
        local models do): before issue 54 its vote was followed over retrieval's score;
        since, strong evidence is followed whatever the vote."""
        if e["rule"] is not None:
            return e["rule"][0] == "rag"
        if e["overlap"] >= STRONG_OVERLAP:
            return True
        return evidence_first and e["score"] >= SCORE_THRESHOLD

    def voted(evidence_first: bool) -> dict[str, float]:
        served = sum(
            with_a_no_voter(e, evidence_first=evidence_first)
            and (documents[item["document"]], item["section"]) in e["passages"]
            for item, e in on
        )
        wrong = sum(with_a_no_voter(e, evidence_first=evidence_first) for _, e in off)
        return {
            "passage_sent": round(served / len(on), 3),
            "off_topic_sent": round(wrong / len(off), 3),
        }

    def kept(hit: tuple, floor: float) -> bool:
        """A passage shown as a source (knowledge.hybrid.is_relevant, at `floor`)."""
        return hit[1] >= KEYWORD_MIN_SCORE or hit[2] >= floor

    def sources(floor: float) -> dict[str, float]:
        """Of the questions routed to the documents: the share whose right passage is still
        shown, and of off-topic ones (whatever the route, as a model's vote may send any):
        the share that would still show a source, and the passages they would show."""
        right = sum(
            any(
                h[0] == (documents[item["document"]], item["section"]) and kept(h, floor)
                for h in e["hits"]
            )
            for item, e in on
            if to_documents(e, SCORE_THRESHOLD, 99.0)
        )
        routed = sum(to_documents(e, SCORE_THRESHOLD, 99.0) for _, e in on)
        shown = [sum(kept(h, floor) for h in e["hits"]) for _, e in off]
        return {
            "right_passage_shown": round(right / max(routed, 1), 3),
            "off_topic_with_a_source": round(sum(n > 0 for n in shown) / len(off), 3),
            "off_topic_sources": sum(shown),
        }

    found = sum((documents[i["document"]], i["section"]) in e["passages"] for i, e in on)
    return {
        "questions": len(on),
        "off_topic": len(off),
        "top_k": TOP_K,
        # Whatever the routing: the share of questions whose passage retrieval finds at all.
        "passage_in_top_k": round(found / len(on), 3),
        "chosen": {"score": SCORE_THRESHOLD, **outcome(SCORE_THRESHOLD, 99.0)},
        "voter_always_no": {"vote_first": voted(False), "evidence_first": voted(True)},
        "targets": {"passage_sent": 0.95, "off_topic_sent": 0.05},
        # The relevance floor of what a reply cites (issue 56): the chosen one, and a grid.
        "source_floor": {"similarity": SIMILARITY_FLOOR, **sources(SIMILARITY_FLOOR)},
        "source_floor_grid": {f"similarity>={f}": sources(f) for f in FLOORS},
        "grid": {
            f"score>={t} or similarity>={s}": outcome(t, s)
            for t in SCORES
            for s in (*SIMILARITIES, 99.0)
        },
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
