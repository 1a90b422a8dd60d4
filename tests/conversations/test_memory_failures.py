"""A reply that fails because the conversation's memory (its checkpoints, the database) could
not be reached says so: never "the model did not answer" (issue 30)."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from langgraph.checkpoint.memory import InMemorySaver

from agent.checkpoint import close_checkpointers
from agent.config import AgentConfig
from conversations import services
from conversations.realtime.hub import aclose_hub
from conversations.replies import Ask, start_reply
from tests.agent.helpers import new_id, run_one

pytestmark = pytest.mark.django_db(transaction=True)

LOST = "consuming input failed: server closed the connection unexpectedly"


class UnreachableSaver(InMemorySaver):
    """A checkpointer whose database went away."""

    async def aget_tuple(self, config):
        raise psycopg.OperationalError(LOST)

    async def aput(self, *args, **kwargs):
        raise psycopg.OperationalError(LOST)


async def test_a_turn_whose_checkpoints_fail_says_the_memory_failed_not_the_model():
    config = AgentConfig(offline_chars_per_second=0)
    result = await run_one(config, UnreachableSaver(), new_id(), "hi")
    assert result.finished["finish_reason"] == "error"
    assert result.codes("generate")[-1] == "memory.unreachable"
    assert "model.failed" not in [p.get("code") for p in result.finished["parts"]]


@pytest.fixture
async def offline(settings):
    settings.OPENAI_API_KEY = None
    settings.OFFLINE_MODEL_CHARS_PER_SECOND = 0
    yield
    await aclose_hub()
    await close_checkpointers()
    await sync_to_async(connections.close_all)()


async def _reply_with(alice, monkeypatch, failing):
    monkeypatch.setattr("conversations.replies.threads.aget_checkpointer", failing)
    conversation = await sync_to_async(services.create_conversation)(user=alice, title="Memory")
    errors = []

    async def on_error(frame):
        errors.append(frame)

    started = await start_reply(
        user=alice, ask=Ask.send("hello"), conversation_id=conversation.id, on_error=on_error
    )
    reply = await started.assistant_message()
    for _ in range(100):  # the asking socket hears it after generation.finished has gone out
        if errors:
            break
        await asyncio.sleep(0.02)
    return reply, errors


async def test_a_reply_whose_checkpointer_cannot_open_names_the_memory(offline, alice, monkeypatch):
    async def unreachable():
        raise psycopg.OperationalError("couldn't get a connection after 5.00 sec")

    reply, errors = await _reply_with(alice, monkeypatch, unreachable)
    assert reply.finish_reason == "error"
    assert [p["code"] for p in reply.parts] == ["memory.unreachable"]  # the page says why
    assert [(e["code"], e["detail"]) for e in errors] == [
        ("unavailable", "The conversation's memory could not be reached; try again in a moment.")
    ]


async def test_a_reply_whose_turn_loses_its_checkpoints_names_the_memory(
    offline, alice, monkeypatch
):
    async def unreachable_saver():
        return UnreachableSaver()

    reply, errors = await _reply_with(alice, monkeypatch, unreachable_saver)
    assert reply.finish_reason == "error"
    assert "memory.unreachable" in [p.get("code") for p in reply.parts]
    assert [e["code"] for e in errors] == ["unavailable"]
