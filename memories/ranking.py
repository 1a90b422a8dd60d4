"""Rank short texts against what the user just wrote, with the project's own keyword search.

The same Korean-aware words as the knowledge base (`text.words`: particles stripped,
prefix forms, loanwords both ways) and its scoring (`text.scoring`: IDF-weighted share
of the query's words a text holds). Used for memories across conversations and for a
conversation's own older messages; no model call, no database: callers hand in the texts
(and, for memories, how near in meaning each is to the query).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent import intents
from text.scoring import concept_match, idf_weights, score_chunk
from text.words import Concept, concepts


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


# What makes a memory relevant to a turn (measured on 30 personal facts against 20
# questions about them and 15 unrelated ones, English and Korean, with the bundled model):
# its meaning near the question's (cosine ≥ 0.33: 16 of 20 found, 1 of 15 unrelated
# questions reached one); or its words (keyword score ≥ 0.45: "my locker number" holds
# "locker number"; a shared "name" alone scores 0.38 and brings nothing); or both weakly
# at once (≥ 0.3 and ≥ 0.25: "When should I walk the dog?" and "My dog's name is Bori.",
# 0.37 and 0.27; no unrelated question matched any memory's words at all).
MEMORY_SIMILARITY = 0.33
MEMORY_KEYWORD_SCORE = 0.45
MEMORY_BOTH = (0.3, 0.25)  # (keyword score, cosine), together
# Among the relevant, none far below the best (a strong match does not drag weak ones in).
MEMORY_SIMILARITY_SPREAD = 0.25
RRF_K = 60


def choose_memories(
    query: str,
    memories: Sequence[dict],
    k: int,
    *,
    nearness: Callable[[str, list[str]], Sequence[float]] | None = None,
) -> list[dict]:
    """Return at most `k` of `memories` ({id, text, …}) relevant to `query`, best first:
    by their words and, given `nearness` (the cosine of the query's meaning and each
    text's), by their meaning, fused by reciprocal rank. Nothing relevant: none at all. A
    question about the memories themselves ("what do you remember about me?") gets the
    newest `k`."""
    if k <= 0 or not memories:
        return []
    if intents.asks_what_is_remembered(query):
        return list(memories[:k])  # the newest: a question about the memories themselves
    by_id = {m["id"]: m for m in memories}
    texts = [(m["id"], m["text"]) for m in memories]
    by_score = {r.key: r.score for r in rank(query_concepts(query), texts)}
    cosines = dict.fromkeys(by_id, 0.0)
    if nearness is not None:
        cosines = dict(zip(by_id, nearness(query, [text for _, text in texts]), strict=True))
    floor = max(MEMORY_SIMILARITY, max(cosines.values(), default=0.0) - MEMORY_SIMILARITY_SPREAD)

    def relevant(key: str) -> bool:
        score, cosine = by_score.get(key, 0.0), cosines[key]
        both = score >= MEMORY_BOTH[0] and cosine >= MEMORY_BOTH[1]
        return cosine >= floor or score >= MEMORY_KEYWORD_SCORE or both

    kept = [key for key in by_id if relevant(key)]
    by_words = sorted((k for k in kept if k in by_score), key=lambda k: -by_score[k])
    by_meaning = sorted((k for k in kept if cosines[k] > 0), key=lambda k: -cosines[k])
    fused: dict[str, float] = {}
    for ranking in (by_words, by_meaning):
        for place, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1 / (RRF_K + place)
    ordered = sorted(fused, key=lambda key: -fused[key])
    return [by_id[key] for key in ordered[:k]]
