"""A model's reasoning, told apart from its answer, in each form servers send it.

Servers with a reasoning parser send it in the stream's delta, as `reasoning_content`
(llama.cpp, DeepSeek, vLLM before 0.11, LiteLLM) or `reasoning` (vLLM since 0.11, OpenRouter,
Ollama); `reasoning_of` reads either, once. A model served without such a parser (Qwen3,
DeepSeek-R1 and their distills) writes it inline at the start of its text, as
`<think>…</think>`; `ThinkSplitter` takes that apart while the text streams, the tags split
across any chunks, and `without_thinking` does the same to a whole answer (a title, a
summary). Only a block at the very start counts: a reply that talks about the tag later
on keeps its words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

OPEN, CLOSE = "<think>", "</think>"
_LEADING_BLOCK = re.compile(r"\A\s*<think>(.*?)(?:</think>\s*|\Z)", re.DOTALL)


def reasoning_of(delta: dict[str, Any]) -> str:
    """Return the reasoning a stream delta carries ("" for none).

    vLLM 0.11 sent the same text under both names while the old one was deprecated, and
    OpenRouter repeats it in `reasoning_details`: one field is read, never two.
    """
    text = delta.get("reasoning_content") or delta.get("reasoning")
    return text if isinstance(text, str) else ""


def without_thinking(text: str) -> str:
    """Return a whole answer without the `<think>` block it may start with."""
    match = _LEADING_BLOCK.match(text)
    return text[match.end() :] if match else text


def _partial_suffix(text: str, tag: str) -> int:
    """Return the length of the longest end of `text` that is a beginning of `tag`."""
    for size in range(min(len(text), len(tag) - 1), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


class ThinkSplitter:
    """Split streamed text into reasoning and answer, passing each piece on as it comes.

    Text is held back only while it could still be the start of a tag: before the first
    visible characters tell whether the reply opens with `<think>`, and at the end of a
    piece that may be the first letters of `</think>`.
    """

    def __init__(self, on_text: Callable[[str], None], on_reasoning: Callable[[str], None]):
        self.on_text = on_text
        self.on_reasoning = on_reasoning
        self.state = "start"  # then "answer", or "thinking", "after" (the block) and "answer"
        self.held = ""
        self.answer: list[str] = []  # the answer's text, for the whole message
        self.found = False  # whether the reply opened with a <think> block
        self._reasoned = False

    def __call__(self, piece: str) -> None:
        if self.state == "answer":
            self._answer(piece)
            return
        if self.state == "after":
            self._after(piece)
            return
        text, self.held = self.held + piece, ""
        if self.state == "start":
            visible = text.lstrip()
            if OPEN.startswith(visible):  # "", or the tag's first letters: not yet known
                self.held = text
                return
            if not visible.startswith(OPEN):
                self.state = "answer"
                self._answer(text)
                return
            self.state, self.found = "thinking", True
            text = visible[len(OPEN) :]
        self._think(text)

    def _think(self, text: str) -> None:
        end = text.find(CLOSE)
        if end < 0:  # hold a tag's first letters, and the blank space before them
            keep = _partial_suffix(text, CLOSE)
            body = text[: len(text) - keep]
            shown = body.rstrip()
            self._reason(shown)
            self.held = body[len(shown) :] + text[len(text) - keep :]
            return
        self._reason(text[:end].rstrip())
        self.state = "after"
        self._after(text[end + len(CLOSE) :])

    def _after(self, text: str) -> None:
        """The answer's first text after the block: the blank lines between them go."""
        text = text.lstrip()
        if text:
            self.state = "answer"
            self._answer(text)

    def _reason(self, text: str) -> None:
        if not self._reasoned:  # the line break after the opening tag
            text = text.lstrip()
        if text:
            self._reasoned = True
            self.on_reasoning(text)

    def _answer(self, text: str) -> None:
        if text:
            self.answer.append(text)
            self.on_text(text)

    def close(self) -> None:
        """Hand on what is still held: an unfinished tag is the reasoning's (the model was
        cut off while thinking), a short reply that is not a tag is the answer."""
        held, self.held = self.held, ""
        if self.state == "thinking":
            self._reason(held.rstrip())
        elif self.state == "start":
            self._answer(held)
