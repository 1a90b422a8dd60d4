"""Fold messages into memory without the model: the bounded fallback of summarizing.

When the summarizer refuses (its summary lost or invented facts) or fails, the messages
that left the window still have to go, or memory grows with every turn. What replaces
them is the user's own words, shortened to the size of a summary segment: nothing
invented, and the messages themselves stay in the database, where recall finds them
word for word.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage

from agent import prompts
from agent.config import AgentConfig
from agent.tokens import estimate_message_tokens, estimate_raw_tokens, message_text

# A message's share of an extract never drops below this (a word or two says nothing).
MIN_SHARE_TOKENS = 16


def segment_max_words(config: AgentConfig) -> int:
    """Return the word budget the summarizer is asked to keep one segment within."""
    share = config.compression_target * config.context_window / (config.memory_max_summaries + 1)
    return int(min(300.0, max(60.0, share)) * 0.75)


def segment_max_tokens(config: AgentConfig) -> int:
    """Return the most tokens one summary segment may hold, whoever wrote it.

    Twice the words asked for (a word is one to two tokens, Korean more): a summarizer
    that writes longer is cut here, so the summaries of a request stay bounded."""
    return 2 * segment_max_words(config)


def summarizer_input_tokens(config: AgentConfig) -> int:
    """Return the most tokens of messages one summarizer request may carry."""
    return max(2_000, int(config.compression_target * config.context_window))


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


def extract_text(messages: Sequence[BaseMessage], max_tokens: int, language: str) -> str:
    """Return what the user said in `messages`, each message shortened to its share."""
    said = [message_text(m).strip() for m in messages if isinstance(m, HumanMessage)]
    said = [text for text in said if text]
    intro = prompts.EXTRACT_INTRO[language]
    if not said:
        return intro
    room = max_tokens - int(estimate_raw_tokens(intro)) - 2
    share = max(MIN_SHARE_TOKENS, room // len(said))
    lines = [truncate_to_tokens(" ".join(text.split()), share) for text in said]
    return truncate_to_tokens("\n".join([intro, *(f"- {line}" for line in lines)]), max_tokens)


def merge_texts(first: str, second: str, max_tokens: int) -> str:
    """Join two segments into one of at most `max_tokens`, each keeping its beginning."""
    head = truncate_to_tokens(first, max_tokens // 2)
    room = max_tokens - int(estimate_raw_tokens(head)) - 1
    return f"{head}\n{truncate_to_tokens(second, max(MIN_SHARE_TOKENS, room))}"


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
    cap = segment_max_tokens(config)
    segments = [*summaries, extract_text(old, cap, language)]
    limit = max(1, config.memory_max_summaries)
    while len(segments) > limit:
        if config.summary_overflow == "drop":
            segments = segments[-limit:]
        else:
            segments = [merge_texts(segments[0], segments[1], cap), *segments[2:]]
    return segments
