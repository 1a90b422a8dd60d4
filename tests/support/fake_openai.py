"""A real OpenAI-compatible HTTP server for tests and benchmarks.

    with FakeOpenAI() as server:                # 127.0.0.1, a free port
        server.enqueue("Hello!", Reply(tool_calls=[ToolCall("calculator", {...})]))
        ChatOpenAI(base_url=server.base_url, api_key="x", ...)
        server.requests                         # every request body, in order

Scripted replies are served first, in order; then `responder(body)` answers.
A reply can stream slowly, fail with an HTTP status, or break off mid-stream; it can also
misbehave as real servers do: hang without sending a byte, fall silent mid-stream, end
without a `finish_reason` (llama.cpp's server, cut by another request) or without
`[DONE]`, send a line that is not JSON. Any text goes on the wire as a server would send
it: NUL and lone surrogates (`"a\x00\ud800"` in a reply's text or a tool call's
arguments) as JSON escapes.
`GET /v1/models` lists `server.models`. Title requests (agent/titles.py) run in the
background after a first reply, at a moment no script can foresee: they are answered by
`title_responder` and kept in `server.title_requests`, apart from the script and
`server.requests`.
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent import prompts

__all__ = ["FakeOpenAI", "Reply", "ToolCall", "count_tokens", "default_responder"]

# Punctuation runs merge the way BPE merges `{"`, `":` and `},`.
_TOKEN = re.compile(r"[\uac00-\ud7a3]|[A-Za-z]+|\d{1,3}|[^\s\w]{1,3}")


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass
class Reply:
    """One scripted answer of the fake server."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    status: int = 200  # anything else answers an OpenAI-style error with this status
    error_message: str = "The server had an error while processing your request."
    fail_after_chunks: int | None = None  # drop the connection after this many text chunks
    chars_per_second: float | None = None  # pace the stream
    chunk_chars: int = 4
    finish_reason: str | None = None  # default: "tool_calls" or "stop"
    prompt_tokens: int | None = None  # default: counted from the request
    delay: float = 0.0  # seconds before answering
    stream_error: str | None = None  # after the text: an `{"error": …}` event, as proxies send
    send_usage: bool = True  # False: no usage in the stream, as llama.cpp's server
    hang: bool = False  # accept the request, then send nothing until the client leaves
    stall_after_chunks: int | None = None  # fall silent after this many text chunks
    finish: bool = True  # False: no `finish_reason` before the end (a cut llama.cpp stream)
    done: bool = True  # False: end the body without `data: [DONE]`
    malformed: str | None = None  # after the text: this `data:` line, which is not JSON


Responder = Callable[[dict[str, Any]], "Reply | str"]


def count_tokens(text: str) -> int:
    """Count tokens roughly the way a BPE tokenizer would (per word, syllable, mark run)."""
    return len(_TOKEN.findall(text))


def message_texts(body: dict[str, Any], role: str | None = None) -> list[str]:
    """Return the text of each message in a request body (optionally of one role)."""
    texts = []
    for message in body.get("messages", []):
        if role is not None and message.get("role") != role:
            continue
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        texts.append(content)
    return texts


def forced_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    """Return the tool definition the request forces (structured output), if any."""
    choice = body.get("tool_choice")
    tools = body.get("tools") or []
    if isinstance(choice, dict):
        name = choice.get("function", {}).get("name")
        return next((t for t in tools if t["function"]["name"] == name), None)
    if choice in ("required", "any") and tools:
        return tools[0]
    return None


def schema_example(schema: dict[str, Any]) -> dict[str, Any]:
    """Return arguments that satisfy a simple JSON schema (last enum value, the field name)."""
    args: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if "enum" in prop:
            args[name] = prop["enum"][-1]
        elif prop.get("type") in ("integer", "number"):
            args[name] = 0
        elif prop.get("type") == "boolean":
            args[name] = False
        else:
            args[name] = name
    return args


def default_responder(body: dict[str, Any]) -> Reply:
    """Answer structured-output requests validly and everything else with an echo."""
    tool = forced_tool(body)
    if tool is not None:
        function = tool["function"]
        return Reply(
            tool_calls=[ToolCall(function["name"], schema_example(function["parameters"]))]
        )
    users = message_texts(body, "user")
    return Reply(text=f"Echo: {users[-1] if users else ''}")


def is_title_request(body: dict[str, Any]) -> bool:
    """Say whether a request asks for a conversation's title."""
    systems = message_texts(body, "system")
    return bool(systems) and systems[0].startswith(prompts.TITLE_MARKER)


def default_title_responder(body: dict[str, Any]) -> Reply:
    """Title a conversation with the first four words of its question."""
    request = message_texts(body, "user")[-1] if message_texts(body, "user") else ""
    question = request.removeprefix("User: ").split("\n\nAssistant:", 1)[0]
    return Reply(text=" ".join(question.split()[:4]) or "Untitled")


class FakeOpenAI:
    """An OpenAI-compatible chat completions server on 127.0.0.1 (a background thread)."""

    def __init__(self, responder: Responder | None = None, *, models: list[str] | None = None):
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
        handler = type("Handler", (_Handler,), {"fake": self})
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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        if not self.path.rstrip("/").endswith("/models"):
            self._send_json(404, {"error": {"message": "not found", "type": "invalid_request"}})
            return
        data = [{"id": m, "object": "model", "owned_by": "fake"} for m in self.fake.models]
        self._send_json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": "not found", "type": "invalid_request"}})
            return
        reply = self.fake.next_reply(body)
        if reply.hang:
            self._wait_for_client_to_leave()
            return
        if reply.delay:
            time.sleep(reply.delay)
        if reply.status != 200:
            error = {"message": reply.error_message, "type": "server_error", "code": None}
            self._send_json(reply.status, {"error": error})
        elif body.get("stream"):
            try:
                self._stream(body, reply)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
                with self.fake._lock:
                    self.fake.disconnects += 1  # the client went away mid-stream
        else:
            self._send_json(200, _completion(body, reply))

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        # Escaped as real servers may write it: NUL and lone surrogates as \u escapes.
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, payload: dict[str, Any] | str) -> None:
        text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        # A lone surrogate cannot be UTF-8: it leaves as the JSON escape a server writes
        # (`\ud800`), which is what Python's backslashreplace spells. NUL is escaped by json.
        data = f"data: {text}\n\n".encode("utf-8", "backslashreplace")
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _stream(self, body: dict[str, Any], reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = _chunk_base(body)
        self._chunk({**base, "choices": [_choice({"role": "assistant", "content": ""})]})
        pieces = [
            reply.text[i : i + reply.chunk_chars]
            for i in range(0, len(reply.text), reply.chunk_chars)
        ]
        for n, piece in enumerate(pieces):
            if reply.fail_after_chunks is not None and n >= reply.fail_after_chunks:
                self._abort()
                return
            if reply.stall_after_chunks is not None and n >= reply.stall_after_chunks:
                self._wait_for_client_to_leave()
                return
            if reply.chars_per_second:
                time.sleep(len(piece) / reply.chars_per_second)
            self._chunk({**base, "choices": [_choice({"content": piece})]})
        if reply.malformed is not None:
            self._chunk(reply.malformed)
        if reply.stream_error is not None:
            self._chunk({"error": {"message": reply.stream_error, "type": "server_error"}})
            self._end(done=True)
            return
        for index, call in enumerate(reply.tool_calls):
            for delta in _tool_call_deltas(index, call):
                self._chunk({**base, "choices": [_choice({"tool_calls": [delta]})]})
        if reply.finish:
            finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
            self._chunk({**base, "choices": [_choice({}, finish)]})
        if reply.send_usage and (body.get("stream_options") or {}).get("include_usage"):
            self._chunk({**base, "choices": [], "usage": _usage(body, reply)})
        self._end(done=reply.done)

    def _end(self, *, done: bool) -> None:
        """End the body properly (the last chunk), after `[DONE]` unless `done` is False."""
        if done:
            self._chunk("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _wait_for_client_to_leave(self) -> None:
        """Send nothing more until the client closes the connection (or the server stops)."""
        self.close_connection = True
        self.wfile.flush()
        while not self.fake.stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            try:
                gone = bool(readable) and not self.connection.recv(65536)
            except OSError:
                gone = True
            if gone:
                with self.fake._lock:
                    self.fake.disconnects += 1
                return

    def _abort(self) -> None:
        """Drop the connection without ending the chunked body (a broken stream)."""
        self.close_connection = True
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)


def _chunk_base(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
    }


def _choice(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}


def _arguments(call: ToolCall) -> str:
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def _call_id(index: int, call: ToolCall) -> str:
    return call.id or f"call_{index}_{call.name}"


def _tool_call_deltas(index: int, call: ToolCall) -> list[dict[str, Any]]:
    arguments = _arguments(call)
    half = len(arguments) // 2
    head = {"index": index, "id": _call_id(index, call), "type": "function"}
    return [
        {**head, "function": {"name": call.name, "arguments": ""}},
        {"index": index, "function": {"arguments": arguments[:half]}},
        {"index": index, "function": {"arguments": arguments[half:]}},
    ]


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    prompt = reply.prompt_tokens
    if prompt is None:
        texts = [*message_texts(body), json.dumps(body.get("tools") or "")]
        prompt = sum(count_tokens(t) + 4 for t in texts)
    completion = count_tokens(reply.text) + sum(
        count_tokens(_arguments(c)) + 4 for c in reply.tool_calls
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id(i, c),
                "type": "function",
                "function": {"name": c.name, "arguments": _arguments(c)},
            }
            for i, c in enumerate(reply.tool_calls)
        ]
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": _usage(body, reply),
    }
