"""Realtime fixtures: a fake agent that keeps arun_agent_turn's contract, sockets, cleanup."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections

from accounts.tokens import create_api_token
from conversations import services
from conversations.models import Message
from conversations.realtime import ratelimit
from conversations.realtime.hub import aclose_hub
from conversations.realtime.redis import aclose_redis


@dataclass
class FakeAgent:
    """Stands in for conversations.agent_service.arun_agent_turn (same contract)."""

    tokens: list[str] = field(default_factory=lambda: [f"word{i} " for i in range(20)])
    delay: float = 0.005
    fail: bool = False
    gate: asyncio.Event | None = None  # when set, the stream waits here after `gate_after`
    gate_after: int = 5
    calls: list[str] = field(default_factory=list)

    async def __call__(
        self, *, conversation: Any, user_message: Message, reply_id: uuid.UUID, on_event: Any
    ) -> Message:
        self.calls.append(user_message.content)
        content = ""
        try:
            await on_event({"type": "thinking", "step": "generate", "content": "writing"})
            for n, token in enumerate(self.tokens):
                if self.gate is not None and n == self.gate_after:
                    await self.gate.wait()
                await on_event({"type": "token", "index": len(content), "text": token})
                content += token
                await asyncio.sleep(self.delay)
            if self.fail:
                raise ConnectionError("model server down")
        except asyncio.CancelledError:
            await _store(conversation, reply_id, content, "stopped")
            raise
        usage = {"input_tokens": 7, "output_tokens": len(self.tokens)}
        await on_event(
            {
                "type": "finished",
                "message_id": str(reply_id),
                "content": content,
                "parts": [],
                "model": "fake",
                "finish_reason": "end_turn",
                "usage": usage,
                "context": {},
                "error": None,
            }
        )
        return await _store(conversation, reply_id, content, "end_turn", tokens=len(self.tokens))


async def _store(conversation: Any, reply_id: Any, content: str, reason: str, tokens: int = 0):
    result = await database_sync_to_async(services.append_message)(
        conversation_id=conversation.pk,
        role="assistant",
        content=content,
        model="fake",
        finish_reason=reason,
        tokens_used=tokens,
        message_id=reply_id,
        announce=False,
    )
    return result.message


@pytest.fixture
def fake_agent(monkeypatch) -> FakeAgent:
    agent = FakeAgent()
    monkeypatch.setattr("conversations.agent_service.arun_agent_turn", agent)
    return agent


@pytest.fixture(autouse=True)
async def realtime_cleanup():
    """Close the hub, Redis clients and the DB thread's connections after each test."""
    ratelimit.reset_local_rates()
    yield
    await aclose_hub()
    await aclose_redis()
    from agent.checkpoint import close_checkpointers

    await close_checkpointers()  # its SQLite thread would keep the test process alive
    await sync_to_async(connections.close_all)()


@pytest.fixture
async def flush_redis(settings):
    """Start from empty Redis keys of ours (rate counters, reply progress)."""
    from conversations.realtime.redis import get_redis

    client = get_redis()
    if client is not None:
        keys = [k async for k in client.scan_iter("chat:*")]
        if keys:
            await client.delete(*keys)


@database_sync_to_async
def make_token(user: Any) -> str:
    return create_api_token(user=user, name="ws").secret


@database_sync_to_async
def make_conversation(user: Any, title: str = "Chat") -> Any:
    return services.create_conversation(user=user, title=title)


def open_socket(conversation_id: Any, *, token: str | None = None, headers=None):
    """Return a communicator on the conversation socket (Bearer when `token` is given)."""
    from chatsite.asgi import application

    all_headers = list(headers or [])
    if token:
        all_headers.append((b"authorization", f"Bearer {token}".encode()))
    return WebsocketCommunicator(
        application, f"/ws/conversations/{conversation_id}/", headers=all_headers
    )


async def receive(comm: WebsocketCommunicator, wait: float = 5) -> dict[str, Any]:
    return json.loads(await comm.receive_from(timeout=wait))


async def receive_until(
    comm: WebsocketCommunicator, frame_type: str, wait: float = 5
) -> list[dict[str, Any]]:
    """Collect frames up to and including the first of `frame_type`."""
    frames = []
    while True:
        frame = await receive(comm, wait)
        frames.append(frame)
        if frame["type"] == frame_type:
            return frames


def stitch(frames: list[dict[str, Any]], run_id: str, text: str = "") -> str:
    """Assemble a reply from token frames, asserting nothing is missing or repeated."""
    for frame in frames:
        if frame["type"] != "token" or frame["run_id"] != run_id:
            continue
        assert frame["index"] <= len(text), f"gap before index {frame['index']}"
        end = frame["index"] + len(frame["text"])
        if end > len(text):
            assert text[frame["index"] :] == frame["text"][: len(text) - frame["index"]]
            text += frame["text"][len(text) - frame["index"] :]
    return text
