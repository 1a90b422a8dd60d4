"""Turn the agent's token stream into numbered chunks: the first at once, then per window."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from django.conf import settings

from .progress import Append

Post = Callable[[Any, Append | None], None]  # post(frame, append)
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
        loop: asyncio.AbstractEventLoop,
        run_id: str,
        reply_to: str,
        post: Post,
        token: TokenBuilder,
    ) -> None:
        self.loop = loop
        self.run_id = run_id
        self.reply_to = reply_to
        self._post = post
        self._token = token
        self.window = getattr(settings, "CHAT_STREAM_COALESCE_MS", 40) / 1000
        self.text = ""  # everything posted so far
        self.text_bytes = 0  # its UTF-8 length
        self.chunks = 0
        self._buffer: list[str] = []
        self._timer: asyncio.TimerHandle | None = None

    def add_token(self, text: str) -> None:
        """Take one token; post at once if it is the first, else within one window."""
        if not text:
            return
        self._buffer.append(text)
        if self.chunks == 0:
            self.flush()
        elif self._timer is None:
            self._timer = self.loop.call_later(self.window, self.flush)

    def post(self, frame: Any) -> None:
        """Post a non-token frame after the tokens before it."""
        self.flush()
        self._post(frame, None)

    def flush(self) -> None:
        """Post the buffered tokens as one chunk."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._buffer:
            return
        text = "".join(self._buffer)
        self._buffer.clear()
        frame = self._token(run_id=self.run_id, index=len(self.text), text=text)
        self.text += text
        self.text_bytes += len(text.encode())
        self.chunks += 1
        self._post(frame, Append(self.run_id, self.reply_to, text, self.text, self.text_bytes))
