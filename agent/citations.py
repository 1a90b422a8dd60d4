"""What a reply cites from the user's documents: which passages, under which numbers.

The documents path gives the model the passages worth citing, each headed `[n] Title —
section`, where n is its *document's* number (1, 2… in the order the documents first rank):
the reply writes `[n]`, and the page shows one source per document under the answer, the
`[n]` in the text a link to that source's best passage. Worth citing means found on real
evidence (retrieval marks it `relevant`: knowledge/hybrid.py's floor) and not the same text
as a passage already kept (a file both attached to the conversation and in the library).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# What a source shows and keeps (its best passage's); `url` opens that passage.
SOURCE_FIELDS = ("document_id", "document_title", "section", "snippet", "score", "url")
PASSAGE_CHARS = 1500  # of one passage, in the prompt


def cited(passages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the passages worth citing, best first, each with `n`: its document's number."""
    numbers: dict[str, int] = {}
    texts: set[str] = set()
    kept = []
    for passage in passages:
        if not passage.get("relevant", True):
            continue
        text = " ".join(str(passage.get("text") or passage.get("snippet") or "").split())
        if text and text in texts:  # the same words from another copy of the file
            continue
        texts.add(text)
        document = str(passage.get("document_id") or passage.get("document_title") or "")
        n = numbers.setdefault(document, len(numbers) + 1)
        kept.append({**passage, "n": n})
    return kept


def sources(passages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return one source per document of `cited` passages: its number and best passage."""
    best: dict[int, dict[str, Any]] = {}
    for passage in passages:
        best.setdefault(passage["n"], passage)
    return [{"n": n, **{key: p[key] for key in SOURCE_FIELDS if key in p}} for n, p in best.items()]


def format_passages(passages: Sequence[dict[str, Any]]) -> list[str]:
    """Return each `cited` passage as the model reads it: `[n] Title — section` and its text."""
    return [
        "[{n}] {title} — {section}\n{text}".format(
            n=p["n"],
            title=p.get("document_title") or p.get("document_id") or "document",
            section=p.get("section") or "",
            text=str(p.get("text") or p.get("snippet") or "")[:PASSAGE_CHARS],
        )
        for p in passages
    ]
