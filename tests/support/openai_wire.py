"""The fake OpenAI server's HTTP side: a request read, a `Reply` written as OpenAI writes it.

A reply leaves as one JSON completion or as an SSE stream (chunked), and misbehaves on
cue: it fails with a status, breaks off, falls silent, hangs, ends without a
`finish_reason` or `[DONE]`, or sends a line that is not JSON (see `Reply`).
"""

from __future__ import annotations

import json
import select
import socket
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from tests.support.openai_replies import Reply, ToolCall, count_tokens, message_texts

if TYPE_CHECKING:
    from tests.support.fake_openai import FakeOpenAI


class Handler(BaseHTTPRequestHandler):
    """Answer one connection's requests for the `fake` server it is bound to."""

    protocol_version = "HTTP/1.1"
    fake: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        fake, path = self.fake, self.path.rstrip("/")
        with fake._lock:
            fake.info_requests.append(f"GET {path}")
        if path.endswith("/props"):
            self._send_body(*fake.dialect.props(fake.models[0], fake.context_window))
            return
        if not path.endswith("/models"):
            self._send_body(*fake.dialect.error(404, "File Not Found"))
            return
        data = [fake.dialect.model_card(m, fake.context_window) for m in fake.models]
        self._send_json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:
        fake, path = self.fake, self.path.rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if "/audio/" in path:
            self._send_body(*fake.audio.answer(path, self.headers.get("Content-Type", ""), raw))
            return
        body = json.loads(raw or b"{}")
        if path.endswith("/images/generations"):
            self._send_body(*fake.images.answer(body))
            return
        if path.endswith("/embeddings"):
            self._send_body(*fake.embeddings.answer(body))
            return
        if path.endswith("/api/show"):
            with fake._lock:
                fake.info_requests.append(f"POST {path}")
            model = str(body.get("model") or body.get("name") or "")
            self._send_body(*fake.dialect.show(model, fake.context_window, fake.num_ctx))
            return
        if not path.endswith("/chat/completions"):
            self._send_body(*fake.dialect.error(404, "File Not Found"))
            return
        if self._too_long(body):
            return
        reply = fake.next_reply(body)
        if reply.hang:
            self._wait_for_client_to_leave()
            return
        if reply.delay:
            time.sleep(reply.delay)
        if reply.status != 200:
            if reply.error_body is not None:
                status, data = reply.status, json.dumps(reply.error_body).encode()
            else:
                status, data = fake.dialect.error(reply.status, reply.error_message)
            self._send_body(status, data, reply.headers)
        elif body.get("stream"):
            try:
                self._stream(body, reply)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
                with self.fake._lock:
                    self.fake.disconnects += 1  # the client went away mid-stream
        else:
            self._send_json(200, _completion(body, reply))

    def _too_long(self, body: dict[str, Any]) -> bool:
        """Refuse a prompt past the window as the dialect's server does (and say whether
        it was); Ollama's cuts it silently instead (counted in `cut_silently`)."""
        fake = self.fake
        tokens = prompt_tokens(body)
        with fake._lock:
            fake.prompt_tokens.append(tokens)
        window = fake.num_ctx if fake.dialect.name == "ollama" else fake.context_window
        if window is None or tokens < window:
            return False
        refusal = fake.dialect.context_error(tokens, window, body.get("max_tokens"))
        with fake._lock:
            if refusal is None:
                fake.cut_silently += 1
            else:
                fake.refused_too_long += 1
        if refusal is None:
            return False
        if fake.dialect.name == "llama-cpp-python" and body.get("stream"):
            # Its error is raised once the event stream has begun: 200, not one event,
            # and the connection closed (seen against llama-cpp-python 0.3 here).
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True
            return True
        self._send_body(*refusal)
        return True

    def _send_body(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        headers = {"Content-Type": "application/json", **(headers or {})}
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

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
        dialect = self.fake.dialect
        self._chunk({**base, "choices": [_choice({"role": "assistant", "content": ""})]})
        text = reply.text
        if reply.reasoning and dialect.think_inline:
            text = f"<think>\n{reply.reasoning}\n</think>\n\n{text}"
        elif reply.reasoning and dialect.reasoning_field is not None:
            for i in range(0, len(reply.reasoning), reply.chunk_chars):
                piece = reply.reasoning[i : i + reply.chunk_chars]
                if reply.chars_per_second:
                    time.sleep(len(piece) / reply.chars_per_second)
                self._chunk({**base, "choices": [_choice(dialect.reasoning_delta(piece))]})
        pieces = [text[i : i + reply.chunk_chars] for i in range(0, len(text), reply.chunk_chars)]
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


def prompt_tokens(body: dict[str, Any]) -> int:
    """Count a request's prompt as the fake server does (its `usage`, its window)."""
    texts = [*message_texts(body), json.dumps(body.get("tools") or "")]
    return sum(count_tokens(t) + 4 for t in texts)


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
        prompt = prompt_tokens(body)
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
