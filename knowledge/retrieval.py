"""Ranked hybrid keyword retrieval over one user's chunks: full-text rank + trigram similarity.

PostgreSQL: the stored `search_vector` (GIN) finds every chunk holding a query word as a
prefix (Korean suffixes are indexed, so this is a substring match for Korean), counts how
many chunks hold each word (for IDF weights), and ranks with `ts_rank`; the best
candidates are re-scored in Python with pg_trgm's `word_similarity` of query and heading.
SQLite: the user's chunks holding any query form (`icontains`) are scored the same way.
Only the given user's chunks are ever read.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, TypedDict

from django.db import connection
from django.db.models import Q
from django.urls import reverse

from core import rls
from text.scoring import idf_weights, overlap_share, score_chunk, snippet
from text.words import Concept, concepts, tsquery

from .models import DocumentChunk
from .selectors import in_scope

MAX_K = 20
CANDIDATES = 60
# Chunks ranked per tier at most: bounds latency when one common word matches thousands.
SCAN_LIMIT = 2000
FTS_WEIGHT = 0.2
SQLITE_MAX_CANDIDATES = 20000


class RetrievedChunk(TypedDict):
    document_id: str
    document_title: str
    section: str
    snippet: str
    score: float
    # The share of the query's words (IDF-weighted) the passage holds whole: routing by
    # keywords (agent/nodes/route.py) reads it.
    overlap: float
    text: str
    chunk_id: int
    section_number: str
    section_title: str
    url: str  # the passage in the document preview


def passage_url(document_id: str, section_index: int) -> str:
    """Return the preview address of one section of a document."""
    return reverse("document", kwargs={"document_id": document_id}) + f"#section-{section_index}"


def retrieve(
    *,
    user_id: Any,
    query: str,
    k: int = 4,
    scope: Any = None,
    documents: Collection[str] | None = None,
) -> list[RetrievedChunk]:
    """Return the user's `k` chunks that best answer `query`, best first (one per section);
    with `scope` (a conversation id) the documents attached there are searched too; with
    `documents` (ids) only those, instead of the whole knowledge base."""
    items = concepts(query or "")
    if not items or user_id is None:
        return []
    k = max(1, min(int(k), MAX_K))
    if connection.vendor == "postgresql" and documents is None:
        with rls.narrowed_to(user_id):  # the search function reads the scope's user
            rows = _postgres_candidates(user_id, query, items, k, scope)
    else:
        # A few chosen documents are read whole (their chunks found by their index): the
        # knowledge base's full-text index would rank every other document first.
        rows = _scanned_candidates(user_id, items, in_scope(scope, documents))
    return _best(rows, items, k)


def _best(rows: list[dict[str, Any]], items: list[Concept], k: int) -> list[RetrievedChunk]:
    scored = []
    for row in rows:
        score = score_chunk(
            items,
            heading=row["heading"],
            text=row["text"],
            weights=row["weights"],
            heading_similarity=row.get("heading_similarity"),
            query=" ".join(c.word for c in items),
        )
        scored.append((score + FTS_WEIGHT * row.get("fts", 0.0), row))
    scored.sort(key=lambda pair: (-pair[0], pair[1]["document_id"], pair[1]["ordinal"]))
    results: list[RetrievedChunk] = []
    seen: set[tuple[str, int]] = set()
    for score, row in scored:
        key = (row["document_id"], row["section_index"])
        if key in seen or score <= 0:
            continue
        seen.add(key)
        results.append(
            {
                "document_id": row["document_id"],
                "document_title": row["document_title"],
                "section": row["heading"],
                "snippet": snippet(row["text"], items),
                "score": round(float(score), 4),
                "overlap": round(
                    overlap_share(
                        items, heading=row["heading"], text=row["text"], weights=row["weights"]
                    ),
                    4,
                ),
                "text": row["text"],
                "chunk_id": row["id"],
                "section_number": row["section_number"],
                "section_title": row["section_title"],
                "url": passage_url(row["document_id"], row["section_index"]),
            }
        )
        if len(results) == k:
            break
    return results


# The user's best chunks come from `knowledge_chunk_matches` (core/migrations/0002): under
# row-level security a full-text match cannot use its GIN index as the app role, so that
# function searches as a role the policies do not narrow and applies the owner filter
# itself, from the scope's `app.user_id`. Titles and heading similarity are read here, for
# the few rows kept, as the app role (RLS and the app's own owner filter both apply).
POSTGRES_SQL = """
    SELECT best.id, best.fts, c.document_id::text AS document_id, d.title AS document_title,
           c.heading, c.text, c.ordinal, c.section_index, c.section_number, c.section_title,
           word_similarity(%(raw)s, c.heading) AS heading_similarity
    FROM knowledge_chunk_matches(
        %(q)s::text, %(scope)s::uuid, %(seen)s::bigint[], %(scan)s::integer, %(limit)s::integer
    ) best
    JOIN knowledge_documentchunk c ON c.id = best.id
    JOIN knowledge_document d ON d.id = c.document_id
    WHERE c.owner_id = %(user)s
"""


def _postgres_candidates(
    user_id: Any, query: str, items: list[Concept], k: int, scope: Any
) -> list[dict[str, Any]]:
    # Strictest first: chunks holding three query words, then two, then any one. With
    # common words, ranking every chunk that holds any one of them reads thousands of rows;
    # a looser tier runs only while the stricter ones found too few.
    rows: list[dict[str, Any]] = []
    enough = max(4 * k, 20)
    for at_least in sorted({min(len(items), 3), min(len(items), 2), 1}, reverse=True):
        if len(rows) >= enough:
            break
        params = {
            "q": tsquery(items, at_least=at_least),
            "user": user_id,
            "scope": scope,
            "raw": query[:500],
            "seen": [row["id"] for row in rows],
            "scan": SCAN_LIMIT,
            "limit": CANDIDATES - len(rows),
        }
        rows.extend(_fetch(POSTGRES_SQL, params))
    weights = idf_weights(items, [f"{r['heading']}\n{r['text']}" for r in rows], len(rows))
    for row in rows:
        row["fts"] = float(row["fts"])
        row["heading_similarity"] = float(row["heading_similarity"] or 0.0)
        row["weights"] = weights
    return rows


def _fetch(sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        columns = [col.name for col in cursor.description]
        return [dict(zip(columns, record, strict=True)) for record in cursor.fetchall()]


def _scanned_candidates(user_id: Any, items: list[Concept], where: Q) -> list[dict[str, Any]]:
    """The chunks `where` picks that hold any query form (SQLite, or a few documents)."""
    holds_any = Q()
    for form in {f for c in items for f in c.forms}:
        holds_any |= Q(text__icontains=form) | Q(heading__icontains=form)
    chunks = DocumentChunk.objects.filter(where, owner_id=user_id)
    population = chunks.count()
    found = list(
        chunks.filter(holds_any)
        .values(
            "id",
            "document_id",
            "document__title",
            "heading",
            "text",
            "ordinal",
            "section_index",
            "section_number",
            "section_title",
        )
        .order_by("document_id", "ordinal")[:SQLITE_MAX_CANDIDATES]
    )
    weights = idf_weights(items, [f"{r['heading']}\n{r['text']}" for r in found], population)
    return [
        {**r, "document_id": str(r["document_id"]), "document_title": r["document__title"]}
        | {"weights": weights}
        for r in found
    ]
