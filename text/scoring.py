"""Score a chunk against a query: which query words it holds, where, and how alike the heading is.

Both backends end here: PostgreSQL picks candidates with its indexes, SQLite hands over
the user's chunks that contain any query form; this module ranks them the same way.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from .words import Concept, is_hangul, words

HEADING_WEIGHT = 1.5
PART_WEIGHT = 0.5
TRIGRAM_WEIGHT = 0.5
SNIPPET_CHARS = 200


@lru_cache(maxsize=1024)
def _pattern(form: str) -> re.Pattern[str]:
    # Korean forms match anywhere (particles glue onto words); others at a word start.
    if is_hangul(form):
        return re.compile(re.escape(form))
    return re.compile(r"(?<![0-9a-z])" + re.escape(form))


def _found(form: str, text: str) -> int:
    if form not in text:  # the common case, and a plain substring test is far cheaper
        return 0
    return len(_pattern(form).findall(text))


def concept_match(concept: Concept, text: str) -> tuple[float, int]:
    """Return how well `text` holds a concept (1 whole, 0.5 by parts, 0 not) and how often."""
    count = _found(concept.word, text) + sum(_found(alias, text) for alias in concept.aliases)
    if count:
        return 1.0, count
    if concept.parts:
        hits = [_found(part, text) for part in concept.parts]
        share = sum(1 for h in hits if h) / len(hits)
        return PART_WEIGHT * share, sum(hits)
    return 0.0, 0


def trigrams(text: str) -> set[str]:
    """Return pg_trgm's trigrams of `text`'s words (padded: two spaces before, one after)."""
    grams: set[str] = set()
    for word in words(text):
        padded = f"  {word} "
        grams.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return grams


def trigram_similarity(a: str, b: str) -> float:
    """Return pg_trgm's `similarity(a, b)`: shared trigrams over all trigrams."""
    left, right = trigrams(a), trigrams(b)
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def score_chunk(
    items: list[Concept],
    *,
    heading: str,
    text: str,
    weights: dict[str, float],
    heading_similarity: float | None = None,
    query: str = "",
    matches: list[tuple[float, int]] | None = None,
) -> float:
    """Return a chunk's score: weighted share of query words found, heading counting more.

    `matches`: `concept_match` of each of `items` in `text`, when the caller has them."""
    if not items:
        return 0.0
    heading_l = heading.lower()
    if matches is None:
        text_l = text.lower()
        matches = [concept_match(concept, text_l) for concept in items]
    total = sum(weights.get(c.word, 1.0) for c in items)
    gained = 0.0
    for concept, (in_body, count) in zip(items, matches, strict=True):
        in_heading, _ = concept_match(concept, heading_l)
        best = max(HEADING_WEIGHT * in_heading, in_body)
        if best:
            # Repeated mentions help a little, with diminishing returns.
            best += 0.1 * math.log1p(count)
        gained += weights.get(concept.word, 1.0) * best
    if heading_similarity is None:
        heading_similarity = trigram_similarity(query, heading) if heading else 0.0
    return gained / total + TRIGRAM_WEIGHT * heading_similarity


def idf_weights(items: list[Concept], texts: list[str], population: int) -> dict[str, float]:
    """Return a weight per query word: rarer among `texts` weighs more (smoothed IDF)."""
    lowered = [t.lower() for t in texts]
    weights = {}
    for concept in items:
        df = sum(1 for t in lowered if concept_match(concept, t)[0] >= 1.0)
        weights[concept.word] = idf(population, df)
    return weights


def idf(population: int, df: int) -> float:
    """Return the smoothed IDF of a word `df` of `population` texts hold."""
    return math.log(1 + (population + 1) / (df + 0.5))


def snippet(text: str, items: list[Concept], size: int = SNIPPET_CHARS) -> str:
    """Return a short plain-text window of `text` around the first query word it holds."""
    flat = " ".join(text.split())
    lowered = flat.lower()
    positions = [
        m.start() for c in items for f in c.forms if (m := _pattern(f).search(lowered)) is not None
    ]
    at = min(positions) if positions else 0
    start = max(0, at - size // 4)
    piece = flat[start : start + size]
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + size < len(flat) else ""
    return f"{prefix}{piece}{suffix}"


def overlap_share(
    items: list[Concept], *, heading: str, text: str, weights: dict[str, float]
) -> float:
    """Return the IDF-weighted share of the query's concepts a chunk holds whole (0–1).

    Unlike `score_chunk` this neither rewards repetition nor heading likeness: it answers
    "does this passage hold what the question asks about", the routing rule's question.
    """
    if not items:
        return 0.0
    haystack = f"{heading}\n{text}".lower()
    total = sum(weights.get(c.word, 1.0) for c in items)
    found = sum(
        weights.get(c.word, 1.0)
        for c in items
        if any(_found(form, haystack) for form in (c.word, *c.aliases))
    )
    return found / total if total else 0.0
