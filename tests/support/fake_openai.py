"""A real OpenAI-compatible HTTP server for tests and benchmarks.

    with FakeOpenAI() as server:                # 127.0.0.1, a free port
        server.enqueue("Hello!", Reply(tool_calls=[ToolCall("calculator", {...})]))
        ChatOpenAI(base_url=server.base_url, api_key="x", ...)
        server.requests                         # every request body, in order

Scripted replies are served first, in order; then `responder(body)` answers
(`Reply`, `ToolCall` and the default responders: tests/support/openai_replies.py).
A reply can stream slowly, fail with an HTTP status, or break off mid-stream; it can also
misbehave as real servers do: hang without sending a byte, fall silent mid-stream, end
without a `finish_reason` (llama.cpp's server, cut by another request) or without
`[DONE]`, send a line that is not JSON. Any text goes on the wire as a server would send
it: NUL and lone surrogates (`"a\x00\ud800"` in a reply's text or a tool call's
arguments) as JSON escapes.
`GET /v1/models` lists `server.models`; `server.audio` answers the audio endpoints,
`server.embeddings` the embeddings one
(tests/support/fake_audio.py). Title requests (agent/titles.py) run in the
background after a first reply, at a moment no script can foresee: they are answered by
`title_responder` and kept in `server.title_requests`, apart from the script and
`server.requests`.
"""

from __future__ import annotations

import threading
from collections import deque
from http.server import ThreadingHTTPServer
from typing import Any

from tests.support.dialects import DIALECTS
from tests.support.fake_audio import FakeAudio
from tests.support.fake_embeddings import FakeEmbeddings
from tests.support.fake_images import FakeImages
from tests.support.openai_replies import (
    Reply,
    Responder,
    default_responder,
    default_title_responder,
    is_title_request,
)
from tests.support.openai_wire import Handler

__all__ = ["FakeOpenAI"]


class FakeOpenAI:
    """An OpenAI-compatible chat completions server on 127.0.0.1 (a background thread)."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        models: list[str] | None = None,
        dialect: str = "openai",
        context_window: int | None = None,
        num_ctx: int | None = None,
    ):
        """`dialect` (tests/support/dialects.py): whose wire format to speak; with
        `context_window`, a prompt of that many tokens or more is refused as that server
        refuses it (Ollama cuts it instead, to `num_ctx` if set, and says nothing)."""
        self.dialect = DIALECTS[dialect]
        self.context_window = context_window
        self.num_ctx = num_ctx
        self.refused_too_long = 0  # requests refused for their length
        self.cut_silently = 0  # prompts cut to the window without a word (Ollama)
        self.prompt_tokens: list[int] = []  # each chat request's prompt, counted as served
        self.info_requests: list[str] = []  # what it was asked besides chats ("GET /props")
        self.audio = FakeAudio()  # /v1/audio/transcriptions and /v1/audio/speech
        self.images = FakeImages()  # /v1/images/generations
        self.embeddings = FakeEmbeddings()  # /v1/embeddings
        self.responder: Responder = responder or default_responder
        self.title_responder: Responder = default_title_responder
        self.models: list[str] = list(models or ["fake-model"])
        self.requests: list[dict[str, Any]] = []
        self.title_requests: list[dict[str, Any]] = []
        self.disconnects = 0  # streams the client dropped before their end
        self.stopping = threading.Event()  # ends every hang when the server stops
        self._queue: deque[Reply | str] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """Return the URL to give ChatOpenAI as base_url."""
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAI:
        """Start serving in a daemon thread."""
        handler = type("Handler", (Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def enqueue(self, *replies: Reply | str) -> None:
        """Script the next answers, served in order before the responder."""
        with self._lock:
            self._queue.extend(replies)

    def clear(self) -> None:
        """Forget scripted replies and recorded requests."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    def next_reply(self, body: dict[str, Any]) -> Reply:
        """Record `body` and return the reply to send."""
        if is_title_request(body):
            with self._lock:
                self.title_requests.append(body)
            reply = self.title_responder(body)
            return Reply(text=reply) if isinstance(reply, str) else reply
        with self._lock:
            self.requests.append(body)
            scripted = self._queue.popleft() if self._queue else None
        reply = scripted if scripted is not None else self.responder(body)
        return Reply(text=reply) if isinstance(reply, str) else reply

    def chat_requests(self, *, tools: bool | None = None) -> list[dict[str, Any]]:
        """Return the recorded requests (only those with/without tools when asked)."""
        with self._lock:
            bodies = list(self.requests)
        if tools is None:
            return bodies
        return [b for b in bodies if bool(b.get("tools")) == tools]
