"""Rank short texts against what the user just wrote, with the project's own keyword search.

The same Korean-aware words as the knowledge base (`knowledge.terms`: particles stripped,
prefix forms, loanwords both ways) and its scoring (`knowledge.scoring`: IDF-weighted share
of the query's words a text holds). Used for memories across conversations and for a
conversation's own older messages; no model call, no database: callers hand in the texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.scoring import concept_match, idf_weights, score_chunk
from knowledge.terms import Concept, concepts


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
    weights = idf_weights(list(items), [t for _, t in texts], population or len(texts))
    ranked = []
    for key, text in texts:
        lowered = text.lower()
        if not any(concept_match(c, lowered)[0] >= 1.0 for c in items):
            continue
        score = score_chunk(list(items), heading="", text=text, weights=weights)
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


def choose_memories(query: str, memories: Sequence[dict], k: int) -> list[dict]:
    """Return at most `k` of `memories` ({id, text, …}, newest first) for a turn: those
    holding words of `query`, best first, then the newest (a few always at hand)."""
    if k <= 0:
        return []
    by_id = {m["id"]: m for m in memories}
    ranked = rank(query_concepts(query), [(m["id"], m["text"]) for m in memories])
    chosen = [by_id[r.key] for r in ranked[:k]]
    picked = {m["id"] for m in chosen}
    chosen += [m for m in memories if m["id"] not in picked][: k - len(chosen)]
    return chosen
