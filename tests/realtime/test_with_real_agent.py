"""The socket over the REAL agent turn (conversations.replies.turns; offline model, no mock).

These pass once conversations.replies.turns is wired to agent.runner.
"""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from conversations.models import Message

from .conftest import make_conversation, make_token, open_socket, receive, receive_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("flush_redis", "offline_model"),
]


@pytest.fixture
def offline_model(settings):
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None


async def test_real_agent_streams_a_stored_reply(alice):
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = open_socket(conversation.id, token=token)
    assert (await comm.connect())[0]
    await comm.send_json_to({"type": "message.send", "content": "Hello, what can you do?"})
    frames = await receive_until(comm, "generation.finished", wait=30)
    finished = frames[-1]
    text = ""
    for frame in frames:
        if frame["type"] == "token":
            assert frame["index"] == len(text)
            text += frame["text"]
    assert text and text == finished["message"]["content"]
    assert finished["finish_reason"] == "end_turn"
    created = [f["message"]["id"] for f in frames if f["type"] == "message.created"]
    assert len(created) == len(set(created)) == 2  # each message announced once
    kinds = [f["type"] for f in frames]
    after_text = kinds[max(i for i, kind in enumerate(kinds) if kind == "token") + 1 :]
    assert after_text == ["message.created", "conversation.updated", "generation.finished"]
    updates = [f["conversation"] for f in frames if f["type"] == "conversation.updated"]
    assert updates[-1]["message_count"] == 2  # the counters include the reply
    assert [f["message_count"] for f in updates].count(2) == 1  # and say so once
    reply = await Message.objects.aget(pk=finished["run_id"])
    assert reply.content == text and reply.role == "assistant"
    await comm.disconnect()


async def test_real_agent_stops_with_the_partial_text(alice, settings):
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = open_socket(conversation.id, token=token)
    assert (await comm.connect())[0]
    prompt = "Please write a long and detailed explanation of how websockets work. " * 3
    await comm.send_json_to({"type": "message.send", "content": prompt})
    frames = await receive_until(comm, "token", wait=30)
    await comm.send_json_to({"type": "generation.stop"})
    frames += await receive_until(comm, "generation.finished", wait=30)
    finished = frames[-1]
    text = "".join(f["text"] for f in frames if f["type"] == "token")
    assert finished["finish_reason"] in {"stopped", "end_turn"}
    assert finished["message"]["content"] == text
    stored = await database_sync_to_async(
        lambda: Message.objects.get(pk=finished["run_id"]).finish_reason
    )()
    assert stored == finished["finish_reason"]
    await comm.send_json_to({"type": "ping"})
    assert await receive(comm) == {"type": "pong"}
    await asyncio.sleep(0)
    await comm.disconnect()
