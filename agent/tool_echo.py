"""Keep the words a failed tool call gave the model out of the reply people read.

A failed call answers the model with "Error: <what went wrong>", which may be an
instruction to it ("tell the user so in their language"). A model that repeats that text
(small local ones do) would show people words written for a model: as the reply streams,
each repeat is replaced by the sentence written for people (`failure_reply`, in the
conversation's language), said once per failure. Text that repeats none passes unchanged;
only what could still become a repeat is held back, and never longer than the repeat.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from agent.failure_replies import failure_reply
from agent.tokens import message_text

# A sentence shorter than this is too common to be taken for a repeat ("Not saved.").
MIN_REPEAT_CHARS = 16
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+")
# Lower-casing that keeps every index in place (the texts to find are English).
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(text: str) -> str:
    return text.translate(_ASCII_LOWER)


def failures_of_turn(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """Return the failed tool results since the newest user message."""
    failed: list[ToolMessage] = []
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, ToolMessage) and message.status == "error":
            failed.append(message)
    return failed[::-1]


def repeats_of(text: str) -> list[str]:
    """Return the pieces of a failure's text a reply must not repeat: the whole, the whole
    without its "Error:" label, and each sentence long enough to be told apart."""
    whole = text.strip()
    bare = re.sub(r"^error:\s*", "", whole, flags=re.IGNORECASE)
    pieces = [whole, bare, *_SENTENCE_END.split(bare), *_SENTENCE_END.split(whole)]
    found: list[str] = []
    for piece in pieces:
        piece = piece.strip()
        if len(piece) >= MIN_REPEAT_CHARS and _lower(piece) not in found:
            found.append(_lower(piece))
    return found


class ToolEchoFilter:
    """Pass streamed reply text on to `emit`, a repeat of a failure's text replaced.

    Call it with each piece of text, then `close()`; `text` is everything passed on.
    """

    def __init__(
        self, failures: Sequence[ToolMessage], language: str, emit: Callable[[str], None]
    ) -> None:
        self.emit = emit
        self.text = ""
        self.changed = False
        self._held = ""
        # (what not to repeat, in lower case; which failure it is of)
        self._repeats = [
            (piece, n)
            for n, failure in enumerate(failures)
            for piece in repeats_of(message_text(failure))
        ]
        self._replacements = [failure_reply(failure, language) for failure in failures]
        self._said: set[int] = set()
        self._after_repeat = False  # the space after a repeat waits: another may follow
        self._gap = ""

    def __call__(self, piece: str) -> None:
        self._held += piece
        while True:
            found = self._first_repeat()
            if found is None:
                break
            start, end, failure = found
            self._pass(self._held[:start])
            if failure not in self._said:
                self._said.add(failure)
                self._pass(self._replacements[failure])
            self._after_repeat, self.changed = True, True
            self._held = self._held[end:]
        keep = self._could_become_repeat()
        self._pass(self._held[: len(self._held) - keep])
        self._held = self._held[len(self._held) - keep :]

    def close(self) -> None:
        """Pass on what was held back (it never became a repeat)."""
        held, self._held = self._held, ""
        self._pass(held)

    def applied_to(self, message: AIMessage) -> AIMessage:
        """Return the model's whole message with the text people were shown."""
        if not self.changed:
            return message
        return message.model_copy(update={"content": self.text})

    def _pass(self, text: str) -> None:
        if self._after_repeat:
            rest = text.lstrip()
            if not rest:
                self._gap = text or self._gap
                return
            lead = text[: len(text) - len(rest)]
            text, self._gap = (lead or self._gap) + rest, ""
            self._after_repeat = False
        if text:
            self.text += text
            self.emit(text)

    def _first_repeat(self) -> tuple[int, int, int] | None:
        """Return (start, end, failure) of the earliest (then longest) whole repeat held."""
        held = _lower(self._held)
        best: tuple[int, int, int] | None = None
        for piece, failure in self._repeats:
            start = held.find(piece)
            if start < 0:
                continue
            end = start + len(piece)
            if best is None or (start, -end) < (best[0], -best[1]):
                best = (start, end, failure)
        return best

    def _could_become_repeat(self) -> int:
        """Return the length of the longest end of the held text that starts a repeat."""
        held = _lower(self._held)
        longest = 0
        for piece, _ in self._repeats:
            start = held.find(piece[0], max(0, len(held) - len(piece) + 1))
            while start >= 0 and len(held) - start > longest:
                if piece.startswith(held[start:]):
                    longest = len(held) - start
                    break
                start = held.find(piece[0], start + 1)
        return longest
