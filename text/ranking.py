"""Rank texts against a query with the project's own keyword search, and fuse rankings.

The words are `text.words`' (particles stripped, prefix forms, loanwords both ways), the
score `text.scoring`'s (IDF-weighted share of the query's words a text holds). Used for
memories across conversations, a conversation's own older messages and, fused with the
meaning path, the knowledge base. No model call, no database: callers hand in the texts.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from .scoring import concept_match, idf, score_chunk
from .words import Concept, concepts

K = TypeVar("K", bound=Hashable)
# Reciprocal-rank fusion's constant: a first place is worth 1/61, a tenth 1/70, so an item
# two rankings both place lower still beats one only a single ranking places first.
RRF_K = 60


def fuse(rankings: Iterable[Sequence[K]]) -> dict[K, float]:
    """Return each key's fused score, Σ 1 / (RRF_K + place) over the rankings holding it,
    best first (dicts keep order)."""
    fused: dict[K, float] = {}
    for ranking in rankings:
        for place, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1 / (RRF_K + place)
    return dict(sorted(fused.items(), key=lambda item: -item[1]))


@dataclass(frozen=True)
class Ranked:
    key: str
    score: float


def query_concepts(query: str) -> list[Concept]:
    """Return what `query` looks for (its content words with their matching forms)."""
    return concepts(query or "")


def missing_concepts(query: str, present: str) -> list[Concept]:
    """Return the words of `query` that `present` (what the model already has: the kept
    messages and the summaries) does not hold: what the user refers to beyond it."""
    held = present.lower()
    return [c for c in query_concepts(query) if concept_match(c, held)[0] < 1.0]


def rank(
    items: Sequence[Concept], texts: Sequence[tuple[str, str]], *, population: int | None = None
) -> list[Ranked]:
    """Return the keys of `texts` ((key, text) pairs) that hold at least one of `items`
    whole, best first; rarer words weigh more (IDF over `population`, default the texts)."""
    if not items or not texts:
        return []
    items = list(items)
    # Each text is matched once: its document frequencies and its score read the same matches.
    found = []
    for key, text in texts:
        lowered = text.lower()
        found.append((key, text, [concept_match(c, lowered) for c in items]))
    population = population or len(texts)
    weights = {
        c.word: idf(population, sum(1 for _, _, m in found if m[i][0] >= 1.0))
        for i, c in enumerate(items)
    }
    ranked = []
    for key, text, matches in found:
        if not any(whole >= 1.0 for whole, _ in matches):
            continue
        score = score_chunk(items, heading="", text=text, weights=weights, matches=matches)
        ranked.append(Ranked(key, round(score, 4)))
    ranked.sort(key=lambda r: -r.score)
    return ranked


def select_recalled(
    query: str,
    present: str,
    candidates: Sequence[dict[str, str]],
    *,
    population: int | None = None,
    limit: int = 4,
) -> list[dict[str, str]]:
    """Return the `candidates` ({id, role, content}, newest first) that hold words of
    `query` missing from `present`, best first, at most `limit`."""
    items = missing_concepts(query, present)
    if not items:
        return []
    by_id = {c["id"]: c for c in candidates}
    texts = [(c["id"], c["content"]) for c in candidates]
    return [by_id[r.key] for r in rank(items, texts, population=population)[:limit]]
