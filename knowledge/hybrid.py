"""The one ranking of a user's passages: words (knowledge/retrieval.py) and meaning
(knowledge/vectors.py), fused by reciprocal rank.

Each path ranks sections on its own: the keyword path by its score (full-text rank, IDF
overlap, heading similarity), the dense path by the cosine of the question's vector and the
chunk's (a keyword hit below KEYWORD_MIN_SCORE is left out). A section's fused score is
Σ 1 / (RRF_K + rank) over the paths that found it (`text.ranking.fuse`), so a passage both
find comes first, and one only the dense path finds (a paraphrase, a question in the other
language) still comes. Every result says which paths found it (`found_by`) and how near its
meaning was (`similarity`). Chunks not embedded yet are found by their words alone.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from core.db_async import db_async
from text.ranking import fuse
from text.scoring import overlap_share, snippet
from text.words import concepts

from . import embeddings, vectors
from .models import DocumentChunk
from .retrieval import MAX_K, RetrievedChunk, passage_url
from .retrieval import retrieve as keyword_retrieve

# A keyword hit weaker than this does not take part: across languages the words path
# finds only chance matches, which would push the meaning path's good ones down. Measured
# (bench/crosslingual.py, bench/route_calibration.py): 0 → 0.363 cross-language recall@3 and
# 0.874 of the handbook questions' passages in the top 4; 0.4 → 0.654 and 0.931.
KEYWORD_MIN_SCORE = 0.4
# A passage is cited (shown as a source, and given to the model on the documents path) only
# on real evidence: its words (a keyword hit, KEYWORD_MIN_SCORE and up) or a meaning at
# least this near. The dense path always answers with its nearest passages, however far:
# "What is 6 * 7?" came back citing a travel handbook. Measured by
# bench/route_calibration.py (`source_floor_grid`).
SIMILARITY_FLOOR = 0.2
# Sections each path ranks before fusing (the dense path reads a few chunks per section).
PER_PATH = MAX_K
DENSE_CHUNKS = 3 * PER_PATH


def retrieve(
    *,
    user_id: Any,
    query: str,
    k: int = 4,
    scope: Any = None,
    documents: Collection[str] | None = None,
) -> list[RetrievedChunk]:
    """Return the user's `k` passages that best answer `query`, best first (one per
    section); with `scope` (a conversation id) the documents attached there count too;
    with `documents` (ids), only those instead of the whole knowledge base."""
    if user_id is None or not (query or "").strip():
        return []
    k = max(1, min(int(k), MAX_K))
    by_words = keyword_retrieve(
        user_id=user_id, query=query, k=PER_PATH, scope=scope, documents=documents
    )
    by_meaning = _dense(user_id, query, scope, documents)
    by_words = [found for found in by_words if found["score"] >= KEYWORD_MIN_SCORE]
    chunks: dict[tuple[str, int], RetrievedChunk] = {}
    paths: dict[tuple[str, int], list[str]] = {}
    for path, ranking in (("keyword", by_words), ("dense", by_meaning)):
        for found in ranking:
            chunk = chunks.setdefault(_section(found), found)
            paths.setdefault(_section(found), []).append(path)
            if path == "dense":
                chunk["similarity"] = found["similarity"]
    fused = fuse([_section(found) for found in ranking] for ranking in (by_words, by_meaning))
    ranked = sorted(fused, key=lambda key: (-fused[key], chunks[key]["document_id"]))
    results = []
    for key in ranked[:k]:
        chunk = chunks[key]
        chunk["fused"] = round(fused[key], 6)
        chunk["found_by"] = paths[key]
        chunk.setdefault("similarity", None)
        chunk["relevant"] = is_relevant(chunk)
        results.append(chunk)
    return results


def is_relevant(found: dict[str, Any]) -> bool:
    """Say whether a passage is evidence enough to be cited (SIMILARITY_FLOOR)."""
    return float(found.get("score") or 0) >= KEYWORD_MIN_SCORE or (
        float(found.get("similarity") or 0) >= SIMILARITY_FLOOR
    )


# The async twin (core/db_async's naming rule): on PostgreSQL, searches run side by side.
aretrieve = db_async(retrieve, close_serial=False)


def _section(found: dict[str, Any]) -> tuple[str, int]:
    return (found["document_id"], int(found["url"].rsplit("-", 1)[-1]))


def _dense(
    user_id: Any, query: str, scope: Any, documents: Collection[str] | None
) -> list[dict[str, Any]]:
    """The sections whose chunks are nearest the question's meaning, best first."""
    nearest = vectors.nearest(
        user_id=user_id,
        query=lambda: embeddings.embed([query])[0],
        scope=scope,
        limit=DENSE_CHUNKS,
        documents=documents,
    )
    if not nearest:
        return []
    similarity = dict(nearest)
    rows = {
        row["id"]: row
        for row in DocumentChunk.objects.filter(owner_id=user_id, id__in=similarity).values(
            "id",
            "document_id",
            "document__title",
            "heading",
            "text",
            "section_index",
            "section_number",
            "section_title",
        )
    }
    items = concepts(query)
    sections: list[dict[str, Any]] = []
    seen: set[tuple[str, int]] = set()
    for chunk_id, _ in nearest:
        row = rows.get(chunk_id)
        if row is None:
            continue
        key = (str(row["document_id"]), row["section_index"])
        if key in seen:
            continue
        seen.add(key)
        sections.append(_as_result(row, items, similarity[chunk_id]))
        if len(sections) == PER_PATH:
            break
    return sections


def _as_result(row: dict[str, Any], items: list[Any], similarity: float) -> dict[str, Any]:
    document_id = str(row["document_id"])
    return {
        "document_id": document_id,
        "document_title": row["document__title"],
        "section": row["heading"],
        "snippet": snippet(row["text"], items),
        "score": 0.0,  # the keyword path's score: it did not find this one
        "overlap": round(
            overlap_share(items, heading=row["heading"], text=row["text"], weights={}), 4
        )
        if items
        else 0.0,
        "text": row["text"],
        "chunk_id": row["id"],
        "section_number": row["section_number"],
        "section_title": row["section_title"],
        "url": passage_url(document_id, row["section_index"]),
        "similarity": round(similarity, 4),
    }
