"""Check a summary before it replaces what it summarizes (a weak model's can lose facts).

A summary is refused when it is empty, in another language than the conversation, far
shorter than its source, or when its numbers do not come from the source: numbers
(amounts, dates, counts, codes) are the facts small models drop or invent first, and
the only ones a check can compare without a model. Refused, the messages stay in
memory verbatim and the summary is tried again on a later turn.

The measures, and why:
- length: at least 1.5% of the source's characters. A faithful summary of chat is
  rarely under 5% (it keeps names and numbers); "OK", "요약" or one stray word is not a
  summary. The floor is low on purpose: a short summary that keeps the facts is fine.
- language: `detect_language` of the summary equals the conversation's (only judged when
  the summary has at least MIN_LETTERS letters: a summary of numbers has no language).
- numbers kept: at least half of the distinct numbers of two or more digits the *user*
  stated (or the earlier summaries held); one-digit numbers are too often filler ("2 or 3
  ideas"), and the assistant's own numbers (code, lists) need not all survive.
- numbers invented: none of two or more digits absent from the source (list markers
  such as "1." are not numbers).
"""

from __future__ import annotations

import re

from text.language import detect_language

MIN_LENGTH_SHARE = 0.015
MIN_LETTERS = 12
MIN_NUMBERS_KEPT = 0.5
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_LIST_MARKER = re.compile(r"^\s*(?:\(\d+\)|\d+[.)])\s+", re.MULTILINE)


def numbers(text: str) -> set[str]:
    """Return the distinct numbers of two or more digits in `text` (separators dropped)."""
    found = (re.sub(r"[.,]", "", n) for n in _NUMBER.findall(_LIST_MARKER.sub("", text)))
    return {n.lstrip("0") or "0" for n in found if len(n) >= 2}


class SummaryRefused(Exception):
    """A summary failed its checks; `replies` are the summarizer calls it cost."""

    def __init__(self, reason: str, replies: list | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.replies = list(replies or [])


def refusal(summary: str, *, source: str, stated: str, language: str) -> str | None:
    """Return why `summary` may not replace `source` (the transcript and summaries it
    folds), or None when it may; `stated` is what the user said in it (and the earlier
    summaries): the numbers that must survive."""
    text = summary.strip()
    if not text:
        return "empty"
    letters = sum(ch.isalpha() for ch in text)
    if letters >= MIN_LETTERS and detect_language([text]) != language:
        return "wrong language"
    if len(text) < MIN_LENGTH_SHARE * len(source.strip()):
        return "far too short"
    kept = numbers(text)
    invented = kept - numbers(source)
    if invented:
        return f"numbers not in the conversation ({', '.join(sorted(invented)[:3])})"
    facts = numbers(stated)
    if facts and len(kept & facts) < MIN_NUMBERS_KEPT * len(facts):
        return f"lost numbers ({len(facts - kept)} of {len(facts)})"
    return None
