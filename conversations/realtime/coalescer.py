"""Turn the agent's token stream into numbered chunks, paced by the sends themselves.

A chunk leaves at once when the run has none on its way; text that arrives while one is
being sent (the conversation's queue in the hub is busy: a Redis round trip, the event
loop loaded by many streams) waits and leaves as one chunk as soon as that send is done.
So one stream on a quiet server sees every piece of text the moment the model sends it,
and many streams send fewer, larger chunks instead of falling behind: backpressure, not
a timer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .progress import Append

Sent = Callable[[], None]
Post = Callable[[Any, Append | None, Sent | None], None]  # post(frame, append, on_sent)
TokenBuilder = Callable[..., Any]  # token(run_id=, index=, text=) → frame


class Coalescer:
    """Buffer a run's tokens and post them as `token` frames with contiguous indices.

    `index` counts characters of the reply already posted, so a client can prove that
    nothing was dropped or repeated. Non-token frames flush the buffer first, keeping
    the order in which the agent produced things.
    """

    def __init__(
        self,
        *,
        run_id: str,
        reply_to: str,
        post: Post,
        token: TokenBuilder,
        prefix: str = "",
        lane: int = 0,
        model: str = "",
    ) -> None:
        self.run_id = run_id
        self.reply_to = reply_to
        self.lane, self.model = lane, model  # side by side: for the progress record
        self._post = post
        self._token = token
        # Everything posted so far; a continue starts with the cut-off reply's text, so
        # its first chunk's index is that text's length.
        self.text = prefix
        self.text_bytes = len(prefix.encode())  # its UTF-8 length
        self.chunks = 0
        self._buffer: list[str] = []
        self._in_flight = 0  # chunks posted whose send has not finished

    def add_token(self, text: str) -> None:
        """Take a piece of text; post it at once unless a chunk is still on its way."""
        if not text:
            return
        self._buffer.append(text)
        if not self._in_flight:
            self.flush()

    def post(self, frame: Any) -> None:
        """Post a non-token frame after the tokens before it."""
        self.flush()
        self._post(frame, None, None)

    def flush(self) -> None:
        """Post the buffered text as one chunk."""
        if not self._buffer:
            return
        text = "".join(self._buffer)
        self._buffer.clear()
        frame = self._token(run_id=self.run_id, index=len(self.text), text=text)
        self.text += text
        self.text_bytes += len(text.encode())
        self.chunks += 1
        self._in_flight += 1
        append = Append(
            self.run_id, self.reply_to, text, self.text, self.text_bytes, self.lane, self.model
        )
        self._post(frame, append, self._sent)

    def _sent(self) -> None:
        self._in_flight -= 1
        if not self._in_flight:
            self.flush()
