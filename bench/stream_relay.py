"""The baseline for bench/stream.py: a bare Channels consumer that relays the model's stream.

No agent, no database, no channel layer: `message.send` opens a stream to the
OpenAI-compatible server at RELAY_LLM_URL and sends its text as `token` frames,
coalesced the first at once, then every RELAY_COALESCE_MS (40).

RELAY_CLIENT chooses how the relay reads the model: `httpx` (default: raw SSE lines,
the cheapest possible relay) or `langchain` (`ChatOpenAI.astream`, the client SPEC's
stack prescribes), so the benchmark can tell the client's cost from the app's own.

    RELAY_LLM_URL=http://127.0.0.1:PORT/v1 daphne -p PORT bench.stream_relay:application
"""

from __future__ import annotations

import asyncio
import json
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
import django

django.setup()

import httpx  # noqa: E402
from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import re_path  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402 (imported here: it takes a second)

from chatsite.daphne_patches import send_writes_at_once  # noqa: E402

# The app's sockets send at once (chatsite/asgi.py); RELAY_WRITES=buffered: Twisted's way.
if os.environ.get("RELAY_WRITES") != "buffered":
    send_writes_at_once()

LLM_URL = os.environ.get("RELAY_LLM_URL", "http://127.0.0.1:8001/v1")
CLIENT = os.environ.get("RELAY_CLIENT", "httpx")
WINDOW = int(os.environ.get("RELAY_COALESCE_MS", 40)) / 1000
_client: httpx.AsyncClient | None = None
_model = None


def _http() -> httpx.AsyncClient:
    global _client
    if _client is None:
        _client = httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=1000))
    return _client


def _chat_model():
    global _model
    if _model is None:
        _model = ChatOpenAI(
            model="bench",
            api_key="sk-bench",
            base_url=LLM_URL,
            stream_usage=True,
            http_async_client=_http(),
        )
    return _model


async def _texts_httpx(content: str):
    body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": content}]}
    async with _http().stream("POST", f"{LLM_URL}/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            yield choices[0].get("delta", {}).get("content") or ""


async def _texts_langchain(content: str):
    async for chunk in _chat_model().astream(content):
        yield chunk.content if isinstance(chunk.content, str) else ""


class RelayConsumer(AsyncWebsocketConsumer):
    channel_layer_alias = "no-layer"  # no channel layer at all

    async def connect(self) -> None:
        await self.accept()
        self.tasks: set[asyncio.Task] = set()

    async def receive(self, text_data=None, bytes_data=None) -> None:
        frame = json.loads(text_data)
        if frame.get("type") == "ping":
            await self.send(text_data=json.dumps({"type": "pong"}))
        elif frame.get("type") == "message.send":
            task = asyncio.create_task(self.relay(frame["content"]))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def relay(self, content: str) -> None:
        sent, buffer, last = 0, "", 0.0
        loop = asyncio.get_running_loop()
        texts = _texts_langchain if CLIENT == "langchain" else _texts_httpx
        async for text in texts(content):
            buffer += text
            if buffer and (sent == 0 or loop.time() - last >= WINDOW):
                await self.send_token(sent, buffer)
                sent, buffer, last = sent + len(buffer), "", loop.time()
        if buffer:
            await self.send_token(sent, buffer)
        await self.send(text_data=json.dumps({"type": "generation.finished"}))

    async def send_token(self, index: int, text: str) -> None:
        frame = {"type": "token", "run_id": "relay", "index": index, "text": text}
        await self.send(text_data=json.dumps(frame, ensure_ascii=False))


application = ProtocolTypeRouter(
    {"websocket": URLRouter([re_path(r"^ws/relay/$", RelayConsumer.as_asgi())])}
)
