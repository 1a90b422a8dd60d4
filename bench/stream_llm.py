"""A paced OpenAI-compatible streaming server for bench/stream.py (asyncio, stdlib only).

The last user message chooses the stream: `tokens=N rate=R run=ID` (defaults 300, 1000/s).
Tokens are "w0 ", "w1 ", … sent every 10 ms in one event holding the tokens due, and
the emission time of each is kept: GET /emissions?run=ID answers them as JSON.

    python bench/stream_llm.py PORT
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from typing import Any

TICK = 0.01
EMISSIONS: dict[str, list[float]] = {}
_HEAD = '{"id":"bench","object":"chat.completion.chunk","created":0,"model":"bench","choices":'


def _event(payload: str) -> bytes:
    return f"data: {payload}\n\n".encode()


def _text_event(text: str) -> bytes:
    delta = json.dumps({"content": text})
    return _event(f'{_HEAD}[{{"index":0,"delta":{delta},"finish_reason":null}}]}}')


def _options(body: dict[str, Any]) -> tuple[int, float, str]:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    text = users[-1]["content"] if users else ""
    text = text if isinstance(text, str) else json.dumps(text)
    tokens = re.search(r"tokens=(\d+)", text)
    rate = re.search(r"rate=(\d+)", text)
    run = re.search(r"run=(\S+)", text)
    return (
        int(tokens.group(1)) if tokens else 300,
        float(rate.group(1)) if rate else 1000.0,
        run.group(1) if run else "default",
    )


async def _stream(writer: asyncio.StreamWriter, body: dict[str, Any]) -> None:
    count, rate, run = _options(body)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
    emitted = EMISSIONS.setdefault(run, [])
    start, sent = time.monotonic(), 0
    while sent < count:
        due = min(count, int((time.monotonic() - start) * rate) + 1)
        if due > sent:
            writer.write(_text_event("".join(f"w{i} " for i in range(sent, due))))
            await writer.drain()
            now = time.time()
            emitted.extend([now] * (due - sent))
            sent = due
        await asyncio.sleep(TICK)
    done = {"index": 0, "delta": {}, "finish_reason": "stop"}
    writer.write(_event(_HEAD + json.dumps([done]) + "}"))
    usage = {"prompt_tokens": 10, "completion_tokens": count, "total_tokens": count + 10}
    writer.write(_event(_HEAD + '[],"usage":' + json.dumps(usage) + "}"))
    writer.write(_event("[DONE]"))
    await writer.drain()


async def _complete(writer: asyncio.StreamWriter, body: dict[str, Any]) -> None:
    choice = body.get("tool_choice")
    message: dict[str, Any] = {"role": "assistant", "content": "ok"}
    if isinstance(choice, dict):
        name = choice["function"]["name"]
        args = json.dumps({"route": "agent", "reason": "bench"})
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}
            ],
        }
    payload = json.dumps(
        {
            "id": "bench",
            "object": "chat.completion",
            "created": 0,
            "model": "bench",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
        }
    ).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}"
    writer.write(head.encode() + b"\r\nConnection: close\r\n\r\n" + payload)
    await writer.drain()


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:] if h)}
        raw = await reader.readexactly(int(headers.get("content-length", 0)))
        if method == "GET" and target.startswith("/emissions"):
            run = target.partition("run=")[2] or "default"
            payload = json.dumps(EMISSIONS.get(run, [])).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                + f"Content-Length: {len(payload)}\r\n\r\n".encode()
                + payload
            )
        else:
            body = json.loads(raw or b"{}")
            await (_stream if body.get("stream") else _complete)(writer, body)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(port: int) -> None:
    server = await asyncio.start_server(_handle, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
