"""Text from outside the agent (a model's output, a tool's result), made storable once, where
it enters.

PostgreSQL's text and jsonb refuse NUL, and UTF-8 (PostgreSQL, Redis, the websocket's JSON)
has no code for a lone surrogate, which a model server may well send as a JSON escape
(`"\\ud800"`). Left in, one such character fails the reply's store, its frames and its
recovery. So: NUL is dropped, a lone surrogate becomes U+FFFD, and a surrogate pair (two
escapes, as some servers write characters past U+FFFF) becomes the character it spells.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from langchain_core.messages import AIMessage

T = TypeVar("T")
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_HIGH_SURROGATES = ("\ud800", "\udbff")


def clean(value: T) -> T:
    """Return `value` (text, or lists and dicts holding text) as text a row can hold."""
    if isinstance(value, str):
        return _clean_text(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list | tuple):
        return type(value)(clean(v) for v in value)  # type: ignore[return-value]
    return value


def _clean_text(text: str) -> str:
    if _UNSTORABLE.search(text) is None:  # the usual case: one scan, nothing copied
        return text
    text = text.replace("\x00", "")
    # UTF-16 spells a pair as the two surrogates: decoding joins pairs, replaces lone ones.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_message(message: AIMessage) -> AIMessage:
    """Return a model's whole message cleaned: its text, tool calls and metadata."""
    return message.model_copy(
        update={
            "content": clean(message.content),
            "tool_calls": clean(message.tool_calls),
            "invalid_tool_calls": clean(message.invalid_tool_calls),
            "additional_kwargs": clean(message.additional_kwargs),
            "response_metadata": clean(message.response_metadata),
        }
    )


class TextStream:
    """Clean streamed text piece by piece, passing each cleaned piece to `emit`.

    A piece ending in the first half of a surrogate pair is held back until the next piece
    says whether the pair is whole; `close()` hands on what is still held.
    """

    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit
        self._held = ""

    def __call__(self, piece: str) -> None:
        text, self._held = self._held + piece, ""
        if text and _HIGH_SURROGATES[0] <= text[-1] <= _HIGH_SURROGATES[1]:
            text, self._held = text[:-1], text[-1]
        text = _clean_text(text)
        if text:
            self.emit(text)

    def close(self) -> None:
        """Hand on a held character (alone, it is a lone surrogate)."""
        if self._held:
            held, self._held = self._held, ""
            self.emit(_clean_text(held))
