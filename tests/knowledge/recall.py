"""The test corpus (a bilingual company handbook) and its 40 questions, and recall@k over them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

CORPUS_DIR = Path(__file__).parent / "corpus"
CORPUS_FILES = ("handbook_en.md", "취업규칙.txt")


def load_questions() -> list[dict[str, str]]:
    """Return the questions, each with the document and section that answers it."""
    return json.loads((CORPUS_DIR / "questions.json").read_text(encoding="utf-8"))


def corpus_files() -> list[tuple[str, bytes]]:
    """Return the corpus documents as (file name, bytes)."""
    return [(name, (CORPUS_DIR / name).read_bytes()) for name in CORPUS_FILES]


def upload_corpus(user: Any) -> dict[str, str]:
    """Upload the corpus for `user`; return document id by file name."""
    from knowledge.services import upload_document

    return {
        name: str(upload_document(user=user, filename=name, data=data).id)
        for name, data in corpus_files()
    }


def recall_at(
    retrieve: Callable[[str, int], list[dict[str, Any]]],
    documents: dict[str, str],
    *,
    k: int = 3,
) -> tuple[float, list[dict[str, Any]]]:
    """Return recall@k over the questions and the misses (question, expected, got)."""
    questions = load_questions()
    misses = []
    for item in questions:
        got = [(r["document_id"], r["section"]) for r in retrieve(item["q"], k)[:k]]
        if (documents[item["document"]], item["section"]) not in got:
            misses.append({"q": item["q"], "want": item["section"], "got": [s for _, s in got]})
    return 1 - len(misses) / len(questions), misses
