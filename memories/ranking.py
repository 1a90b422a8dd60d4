"""Choose the memories a turn recalls: by their words (`text.ranking`) and their meaning,
fused by reciprocal rank, under thresholds measured on this app's own facts. No model
call, no database: callers hand in the memories and how near in meaning each is."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent import intents
from text.ranking import fuse, query_concepts, rank

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
    return [by_id[key] for key in list(fuse((by_words, by_meaning)))[:k]]
