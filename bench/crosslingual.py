"""Cross-language retrieval: English questions over Korean passages and the reverse; one
JSON line.

The corpus (tests/knowledge/corpus/crosslingual/) is 30 Korean and 30 English passages on
everyday topics and 182 questions, each asked in the other language than its passage and
paraphrased (never the passage's own sentence). Reported: recall@3 (the passage's section
among the first three) by words alone (the keyword path), by meaning alone (the dense
path, with the configured embedding model: the bundled multilingual USE v3 unless
EMBEDDING_MODEL names a server's), and fused (what the agent gets), each way and overall.
Target (issue 33): fused ≥ 0.80 with the bundled model.

    uv run python bench/crosslingual.py                 # SQLite, in a temporary directory
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CORPUS = Path(__file__).resolve().parent.parent / "tests/knowledge/corpus/crosslingual"
TARGET = 0.80


def measure() -> dict[str, object]:
    from django.contrib.auth import get_user_model

    from knowledge import embeddings, hybrid
    from knowledge.retrieval import retrieve as by_words
    from knowledge.services import upload_document

    user = get_user_model().objects.create_user("crosslingual")
    started = time.perf_counter()
    documents = {
        name: str(upload_document(user=user, filename=name, data=(CORPUS / name).read_bytes()).id)
        for name in ("passages_ko.md", "passages_en.md")
    }
    embedded = time.perf_counter() - started
    questions = json.loads((CORPUS / "questions.json").read_text(encoding="utf-8"))

    def by_meaning(query: str, k: int) -> list[dict]:
        return hybrid._dense(user.pk, query, None)[:k]

    paths = {
        "keyword": lambda q: by_words(user_id=user.pk, query=q, k=3),
        "dense": lambda q: by_meaning(q, 3),
        "fused": lambda q: hybrid.retrieve(user_id=user.pk, query=q, k=3),
    }
    hits: dict[str, dict[str, list[bool]]] = {p: {"en→ko": [], "ko→en": []} for p in paths}
    timings = []
    for item in questions:
        way = "en→ko" if item["document"] == "passages_ko.md" else "ko→en"
        wanted = (documents[item["document"]], item["section"])
        for name, search in paths.items():
            began = time.perf_counter()
            found = [(f["document_id"], f["section"]) for f in search(item["q"])]
            if name == "fused":
                timings.append(time.perf_counter() - began)
            hits[name][way].append(wanted in found)

    def rate(values: list[bool]) -> float:
        return round(sum(values) / len(values), 3) if values else 0.0

    recall = {
        name: {
            "overall": rate(ways["en→ko"] + ways["ko→en"]),
            **{way: rate(values) for way, values in ways.items()},
        }
        for name, ways in hits.items()
    }
    timings.sort()
    return {
        "bench": "crosslingual",
        "model": embeddings.model_id(),
        "questions": len(questions),
        "passages": 60,
        "recall_at_3": recall,
        "fused_p50_ms": round(1000 * timings[len(timings) // 2], 1),
        "embed_corpus_s": round(embedded, 2),
        "target": TARGET,
        "fused_meets_target": recall["fused"]["overall"] >= TARGET,
    }


def main() -> None:
    from bench.route_calibration import setup

    with tempfile.TemporaryDirectory() as var:
        setup(None, var)
        print(json.dumps(measure(), ensure_ascii=False))


if __name__ == "__main__":
    main()
