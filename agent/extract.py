"""Fold messages into memory without the model: the bounded fallback of summarizing.

When the summarizer refuses (its summary lost or invented facts) or fails, the messages
that left the window still have to go, or memory grows with every turn. What replaces
them is the user's own words, shortened to the size of a summary segment: nothing
invented, and the messages themselves stay in the database, where recall finds them
word for word.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage

from agent import prompts
from agent.config import AgentConfig
from agent.tokens import estimate_message_tokens, estimate_raw_tokens, message_text

# An extract never gets less room than this (a word or two says nothing).
MIN_SHARE_TOKENS = 16
# A sentence of at most this many words reads as a statement, not chatter.
SHORT_SENTENCE_WORDS = 12
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|\n+")
_LIST_MARK = re.compile(r"^(?:[-*•]|\(?\d+[.)])\s+")
_INTROS = frozenset(prompts.EXTRACT_INTRO.values())


def segment_max_words(config: AgentConfig) -> int:
    """Return the word budget the summarizer is asked to keep one segment within."""
    share = config.compression_target * config.context_window / (config.memory_max_summaries + 1)
    return int(min(300.0, max(60.0, share)) * 0.75)


def segment_max_tokens(config: AgentConfig) -> int:
    """Return the most tokens one summary segment may hold, whoever wrote it.

    Twice the words asked for (a word is one to two tokens, Korean more): a summarizer
    that writes longer is cut here, so the summaries of a request stay bounded."""
    return 2 * segment_max_words(config)


def extract_max_tokens(config: AgentConfig) -> int:
    """Return the most tokens an extract segment holds: about what a summary is asked to
    be (a model's summary may run to `segment_max_tokens`)."""
    return segment_max_words(config) * 4 // 3


def summarizer_input_tokens(config: AgentConfig) -> int:
    """Return the most tokens of messages one summarizer request may carry."""
    # Never more than half a small model's window: the request holds instructions and the
    # answer too (SmolLM2 on llama.cpp reads 2,048 tokens in all).
    window = config.context_window
    return min(max(2_000, int(config.compression_target * window)), window // 2)


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """Cut `text` so its estimate stays within `max_tokens` (a last-resort cap)."""
    raw = estimate_raw_tokens(text)
    if raw <= max_tokens:
        return text
    keep = max(0, int(len(text) * max_tokens / raw) - 2)
    while keep > 0 and estimate_raw_tokens(text[:keep]) + 1 > max_tokens:
        keep = int(keep * 0.9)
    return text[:keep].rstrip() + "…"


def split_for_summarizer(
    messages: Sequence[BaseMessage], max_tokens: int
) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """Split `messages` into (older ones to extract, newest ones the summarizer can take)."""
    cut = len(messages)
    while cut > 0 and estimate_message_tokens(messages[cut - 1 :]) <= max_tokens:
        cut -= 1
    return list(messages[:cut]), list(messages[cut:])


def sentences(text: str) -> list[str]:
    """Split `text` into sentences (and lines), list markers dropped."""
    found = (_LIST_MARK.sub("", piece).strip() for piece in _SENTENCE_END.split(text))
    return [sentence for sentence in found if sentence]


def weight(sentence: str) -> int:
    """Rate how likely `sentence` carries a fact to keep: a number (amounts, dates, codes),
    a name in the middle of it, a short statement. Long chatter rates lowest."""
    words = sentence.split()
    score = 2 if any(ch.isdigit() for ch in sentence) else 0
    score += any(word[:1].isupper() for word in words[1:])
    score += len(words) <= SHORT_SENTENCE_WORDS
    return score


def condense(texts: Sequence[str], max_tokens: int, known: Sequence[str] = ()) -> str:
    """Return the sentences of `texts` within `max_tokens`, in order, each once and none
    already in `known`: when they do not fit, the lowest-rated go first, the oldest first
    among equals."""
    kept: list[str] = []
    seen = {_key(sentence) for text in known for sentence in sentences(text)}
    for text in texts:
        for sentence in sentences(text):
            key = _key(sentence)
            if key not in seen and not _is_intro(sentence):
                seen.add(key)
                kept.append(sentence)
    costs = [estimate_raw_tokens(sentence) + 1 for sentence in kept]
    total = sum(costs)
    dropped: set[int] = set()
    for index in sorted(range(len(kept)), key=lambda i: (weight(kept[i]), i)):
        if total <= max_tokens:
            break
        dropped.add(index)
        total -= costs[index]
    lines = [f"- {s}" for i, s in enumerate(kept) if i not in dropped]
    return truncate_to_tokens("\n".join(lines), max_tokens)


def _key(sentence: str) -> str:
    return " ".join(sentence.lower().split())


def _is_intro(sentence: str) -> bool:
    return sentence in _INTROS


def extract_text(
    messages: Sequence[BaseMessage], max_tokens: int, language: str, known: Sequence[str] = ()
) -> str:
    """Return what the user said in `messages` and `known` lacks, condensed to `max_tokens`."""
    said = [message_text(m) for m in messages if isinstance(m, HumanMessage)]
    return with_intro(said, max_tokens, language, known)


def with_intro(
    texts: Sequence[str], max_tokens: int, language: str, known: Sequence[str] = ()
) -> str:
    """Return `texts` condensed under the line saying it is not a summary."""
    intro = prompts.EXTRACT_INTRO[language]
    room = max_tokens - int(estimate_raw_tokens(intro)) - 1
    body = condense(texts, max(MIN_SHARE_TOKENS, room), known)
    return f"{intro}\n{body}" if body else intro


def merge_texts(first: str, second: str, max_tokens: int, language: str) -> str:
    """Join two segments into one of at most `max_tokens` (their facts first)."""
    if any(_is_intro(s) for s in sentences(f"{first}\n{second}")):
        return with_intro([first, second], max_tokens, language)
    return condense([first, second], max_tokens)


def fold_extractively(
    summaries: Sequence[str],
    old: Sequence[BaseMessage],
    config: AgentConfig,
    language: str,
) -> list[str]:
    """Return the summary window with `old` folded in as an extract (no model call).

    On overflow the two oldest segments are joined (or the oldest dropped, as
    `summary_overflow` says); every segment stays within `segment_max_tokens`.
    """
    new = extract_text(old, extract_max_tokens(config), language, known=summaries)
    segments = [*summaries, new]
    cap = segment_max_tokens(config)
    limit = max(1, config.memory_max_summaries)
    while len(segments) > limit:
        if config.summary_overflow == "drop":
            segments = segments[-limit:]
        else:
            merged = merge_texts(segments[0], segments[1], cap, language)
            segments = [merged, *segments[2:]]
    return segments
