"""Estimate token counts offline for Korean and English text (no tokenizer download)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from functools import lru_cache

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

# One pass over the text: Hangul syllables, other CJK, ASCII words, digit runs,
# whitespace (free), then any other single character.
_PIECE = re.compile(
    r"(?P<hangul>[\uac00-\ud7a3])"
    r"|(?P<jamo>[\u1100-\u11ff\u3130-\u318f])"
    r"|(?P<cjk>[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])"
    r"|(?P<word>[A-Za-z]+)"
    r"|(?P<digits>[0-9]+)"
    r"|(?P<space>\s+)"
    r"|(?P<other>.)",
    re.DOTALL,
)

# Per-message framing the chat format adds (role markers, separators).
MESSAGE_OVERHEAD_TOKENS = 4
# Calibration never moves the estimate further than this from the raw figure.
CALIBRATION_BOUNDS = (0.5, 3.0)


def _word_tokens(length: int) -> float:
    """Return the tokens of one ASCII word: short words are one, long ones split."""
    return 1.0 if length <= 4 else 1.0 + (length - 4) / 4.0


# Instructions, tool schemas and recent messages are estimated again on every turn.
CACHED_TEXT_MAX_CHARS = 8192


def estimate_raw_tokens(text: str) -> float:
    """Return the uncalibrated token estimate of `text` as a float."""
    if len(text) <= CACHED_TEXT_MAX_CHARS:
        return _estimate_cached(text)
    return _estimate(text)


@lru_cache(maxsize=4096)
def _estimate_cached(text: str) -> float:
    return _estimate(text)


# The same pieces counted class by class: a findall per class is far faster than a match
# per Hangul syllable (every weight is a multiple of 1/4, so the sums are exact in any order).
_CJK_CHAR = re.compile(
    "[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
)
_WORD = re.compile(r"[A-Za-z]+")
_DIGITS = re.compile(r"[0-9]+")
_OTHER_CHAR = re.compile(
    "[^\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f"
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "A-Za-z0-9\\s]"
)


def _estimate(text: str) -> float:
    total = float(len(_CJK_CHAR.findall(text)))  # one token per syllable or character
    for word in _WORD.findall(text):
        total += _word_tokens(len(word))
    for digits in _DIGITS.findall(text):
        total += math.ceil(len(digits) / 3)
    for piece in _OTHER_CHAR.findall(text):
        # Punctuation is usually one token; emoji and rare scripts take more.
        total += 1.0 if ord(piece) < 0x3000 else len(piece.encode("utf-8")) / 2
    return total


def _estimate_by_pieces(text: str) -> float:
    """The definition `_estimate` computes faster (kept for the test that compares them)."""
    total = 0.0
    for match in _PIECE.finditer(text):
        kind = match.lastgroup
        piece = match.group()
        if kind == "hangul":
            # o200k/cl100k average roughly one token per common syllable.
            total += 1.0
        elif kind in ("jamo", "cjk"):
            total += 1.0
        elif kind == "word":
            total += _word_tokens(len(piece))
        elif kind == "digits":
            total += math.ceil(len(piece) / 3)
        elif kind == "other":
            # Punctuation is usually one token; emoji and rare scripts take more.
            total += 1.0 if ord(piece) < 0x3000 else len(piece.encode("utf-8")) / 2
    return total


def estimate_tokens(text: str, calibration: float = 1.0) -> int:
    """Estimate the tokens of `text`, scaled by the thread's calibration factor."""
    if not text:
        return 0
    return math.ceil(estimate_raw_tokens(text) * calibration)


def message_text(message: BaseMessage) -> str:
    """Return the text content of `message` (text blocks joined)."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        block if isinstance(block, str) else str(block.get("text", "")) for block in content
    )


def billable_text(message: BaseMessage) -> str:
    """Return everything of `message` a model is billed for (content, tool calls, ids)."""
    text = message_text(message)
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = [{"name": c["name"], "args": c["args"]} for c in message.tool_calls]
        text += json.dumps(calls, ensure_ascii=False)
    if isinstance(message, ToolMessage):
        text += message.tool_call_id or ""
    return text


def estimate_message_tokens(messages: Iterable[BaseMessage], calibration: float = 1.0) -> int:
    """Estimate the prompt tokens of `messages`, framing included."""
    total = 0.0
    for message in messages:
        total += estimate_raw_tokens(billable_text(message)) + MESSAGE_OVERHEAD_TOKENS
    return math.ceil(total * calibration)


def update_calibration(current: float, raw_estimate: int, actual: int | None) -> float:
    """Blend the server-reported prompt size into the calibration factor."""
    if not actual or raw_estimate <= 0:
        return current
    ratio = actual / raw_estimate
    low, high = CALIBRATION_BOUNDS
    blended = 0.5 * current + 0.5 * ratio
    return round(min(high, max(low, blended)), 4)
