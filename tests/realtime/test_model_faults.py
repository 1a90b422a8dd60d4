"""What a model server sends that it should not, through the whole reply path: the API, the
sockets, the stored message, and the conversation free for the next message afterwards."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient
from django.utils import timezone, translation

from accounts.tokens import create_api_token
from agent.steps import MODEL_FAULTS
from conversations.models import Message, ReplyRun
from conversations.realtime import progress
from conversations.realtime.hub import get_hub
from conversations.replies.watchdog import recover_stale_runs
from conversations.steps import step_text
from tests.support import seed
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, ToolCall

from .conftest import make_conversation, open_socket, receive, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flush_redis")]


@pytest.fixture
def model(settings):
    with FakeOpenAI() as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        settings.CHAT_MODEL = "fake-model"
        settings.CHAT_MODELS = ""
        yield server


class Api:
    """The JSON API as one user sees it (Bearer token)."""

    def __init__(self, token: str) -> None:
        self.client = AsyncClient()
        self.headers = {"Authorization": f"Bearer {token}"}

    async def send(self, conversation_id: Any, content: str) -> dict[str, Any]:
        response = await self.client.post(
            f"/api/v1/conversations/{conversation_id}/messages",
            {"content": content},
            content_type="application/json",
            headers=self.headers,
        )
        assert response.status_code == 201, response.content
        return response.json()

    async def post(self, path: str) -> Any:
        return await self.client.post(
            f"/api/v1{path}", {}, content_type="application/json", headers=self.headers
        )


@pytest.fixture
async def api(alice) -> Api:
    return Api((await sync_to_async(create_api_token)(user=alice, name="api")).secret)


async def assert_free(conversation_id: Any) -> None:
    """No reply is running in the conversation (the next message may start one)."""
    running = ReplyRun.objects.filter(
        conversation_id=conversation_id, status=ReplyRun.Status.RUNNING
    )
    assert not await running.aexists()


# --- what the model writes that a row cannot hold ---------------------------------------
async def test_nul_and_lone_surrogates_in_the_reply_are_cleaned_and_stored(model, alice, api):
    model.enqueue(Reply(text="Hel\x00lo \ud800 wor\x00ld \ud83d\ude00!", chunk_chars=3))
    conversation = await make_conversation(alice)
    body = await api.send(conversation.id, "hello")
    reply = body["assistant_message"]
    assert reply is not None
    assert reply["content"] == "Hello \ufffd world \U0001f600!"
    assert reply["finish_reason"] == "end_turn"
    stored = await Message.objects.aget(pk=reply["id"])
    assert stored.content == reply["content"]
    await assert_free(conversation.id)
    model.enqueue("And again.")
    again = await api.send(conversation.id, "again")
    assert again["assistant_message"]["content"] == "And again."


async def test_nul_and_lone_surrogates_in_tool_calls_are_cleaned_and_stored(model, alice, api):
    model.enqueue(
        Reply(
            tool_calls=[
                ToolCall("get_current_datetime", {"timezone": "Mars/\x00Olympus\ud800"}),
                ToolCall("calculator", '{"expression": "2 + 2\x00"}'),
                ToolCall("calcu\x00lator\udfff", {"expression": "1"}),
            ]
        ),
        Reply(text="Done\x00."),
    )
    conversation = await make_conversation(alice)
    token = (await sync_to_async(create_api_token)(user=alice, name="ws")).secret
    socket = open_socket(conversation.id, token=token)
    assert (await socket.connect())[0]
    await socket.send_json_to({"type": "message.send", "content": "what time is it?"})
    frames = await receive_until(socket, "generation.finished", wait=15)
    finished = frames[-1]
    assert finished["finish_reason"] == "end_turn"
    assert finished["message"]["content"] == "Done."
    stored = await Message.objects.aget(pk=finished["run_id"])
    calls = [p for p in stored.parts if p["type"] == "tool_call"]
    assert [c["name"] for c in calls] == [
        "get_current_datetime",
        "calculator",
        "calculator\ufffd",
    ]
    assert calls[0]["args"] == {"timezone": "Mars/Olympus\ufffd"}
    assert calls[1]["args"] == {"expression": "2 + 2"}
    # What went back to the model is clean too.
    tool_messages = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 3
    assert not any("\x00" in m["content"] for m in tool_messages)
    await assert_free(conversation.id)
    await socket.disconnect()


# --- a reply the model server did not finish -------------------------------------------
FAULTS = {
    # llama.cpp's server, cut by another request: no finish_reason, then [DONE]
    "no finish reason": (Reply(text="The first half", finish=False), "model.cut_off"),
    # the same, and the connection closed without [DONE]
    "no finish, no done": (Reply(text="The first half", finish=False, done=False), "model.cut_off"),
    "error mid-stream": (Reply(text="The first half", stream_error="overloaded"), "model.failed"),
    "a line not JSON": (Reply(text="The first half", malformed="<html>502"), "model.failed"),
}


@pytest.mark.parametrize("fault", FAULTS, ids=list(FAULTS))
async def test_a_reply_the_server_did_not_finish_is_stored_as_cut_with_words_for_people(
    model, alice, api, client, fault
):
    broken, code = FAULTS[fault]
    model.enqueue(broken)
    conversation = await make_conversation(alice)
    reply = (await api.send(conversation.id, "tell me"))["assistant_message"]
    assert (reply["finish_reason"], reply["content"]) == ("error", "The first half")
    faults = [p for p in reply["parts"] if p.get("code") in MODEL_FAULTS]
    assert [p["code"] for p in faults] == [code]
    await assert_free(conversation.id)
    # The page says what happened, in the reader's language, and nothing for developers.
    await sync_to_async(client.force_login)(alice)
    url = f"/conversations/{conversation.id}/messages/{reply['id']}/fragment/"
    page = (await sync_to_async(client.get)(url, HTTP_ACCEPT_LANGUAGE="ko")).content.decode()
    note = page.split('class="finish-note error">', 1)[1].split("</p>", 1)[0]
    with translation.override("ko"):
        assert note == step_text(faults[0]) != ""
    assert "모델 서버" in note
    for developer in ("overloaded", "502", "Error", "finish reason", "JSON"):
        assert developer not in note


async def test_a_cut_reply_can_be_continued(model, alice, api):
    model.enqueue(Reply(text="The first half", finish=False), " and the second half.")
    conversation = await make_conversation(alice)
    cut = (await api.send(conversation.id, "tell me"))["assistant_message"]
    assert cut["finish_reason"] == "error"
    response = await api.post(f"/messages/{cut['id']}/continue")
    assert response.status_code == 201, response.content
    whole = response.json()["assistant_message"]
    assert whole["content"] == "The first half and the second half."
    assert whole["finish_reason"] == "end_turn"
    await assert_free(conversation.id)


# --- a model server that says nothing ---------------------------------------------------
async def test_a_hung_model_server_fails_the_reply_within_the_first_byte_timeout(
    model, alice, api, settings
):
    settings.CHAT_MODEL_FIRST_BYTE_TIMEOUT = 0.5
    model.enqueue(Reply(hang=True))
    conversation = await make_conversation(alice)
    token = (await sync_to_async(create_api_token)(user=alice, name="ws")).secret
    socket = open_socket(conversation.id, token=token)
    assert (await socket.connect())[0]
    started = time.monotonic()
    await socket.send_json_to({"type": "message.send", "content": "are you there?"})
    frames = await receive_until(socket, "generation.finished", wait=10)
    assert time.monotonic() - started < 2.5  # not the SDK's 60 s × 3 attempts
    finished = frames[-1]
    assert (finished["finish_reason"], finished["message"]["content"]) == ("error", "")
    said = [f for f in frames if f["type"] == "thinking" and f["code"] in MODEL_FAULTS]
    assert [(f["code"], f["params"]) for f in said] == [("model.timed_out", {"seconds": "0.5"})]
    assert said[0]["content"] == "The model server did not answer within 0.5 seconds"
    assert (await receive(socket))["code"] == "llm_unavailable"  # the socket that asked
    await assert_free(conversation.id)
    model.enqueue("Here now.")
    again = await api.send(conversation.id, "and now?")
    assert again["assistant_message"]["content"] == "Here now."
    await socket.disconnect()


async def test_a_model_server_silent_mid_stream_keeps_the_text_and_can_be_continued(
    model, alice, api, settings
):
    settings.CHAT_MODEL_IDLE_TIMEOUT = 0.5
    model.enqueue(Reply(text="The first half of it", stall_after_chunks=3), " and the rest.")
    conversation = await make_conversation(alice)
    started = time.monotonic()
    cut = (await api.send(conversation.id, "tell me"))["assistant_message"]
    assert time.monotonic() - started < 2.5
    assert (cut["finish_reason"], cut["content"]) == ("error", "The first ha")
    assert [p["code"] for p in cut["parts"] if p.get("code") in MODEL_FAULTS] == ["model.stalled"]
    await assert_free(conversation.id)
    response = await api.post(f"/messages/{cut['id']}/continue")
    assert response.json()["assistant_message"]["content"] == "The first ha and the rest."


# --- the watchdog ------------------------------------------------------------------------
def _dead_run(conversation: Any, run_id: str, minutes_ago: int) -> None:
    question = seed.add_message(conversation_id=conversation.pk, role="user", content="hi")
    ReplyRun.objects.create(
        id=run_id,
        conversation=conversation,
        reply_to=question,
        heartbeat_at=timezone.now() - timedelta(minutes=minutes_ago),
    )


async def test_one_dead_run_that_cannot_be_stored_does_not_hold_up_the_others(
    alice, caplog, require_postgres
):  # PostgreSQL refuses a NUL byte in text; SQLite stores it, so there both recover
    first, second = await make_conversation(alice), await make_conversation(alice)
    broken, fine = "11111111-0000-0000-0000-000000000001", "11111111-0000-0000-0000-000000000002"
    await sync_to_async(_dead_run)(first, broken, minutes_ago=10)  # the older: looked at first
    await sync_to_async(_dead_run)(second, fine, minutes_ago=5)
    # Text no row can hold, as a process that died before this fix could have left it.
    await progress.astart(conversation_id=first.pk, run_id=broken, reply_to="x", text="a\x00b")
    recovered = await recover_stale_runs(get_hub())
    assert recovered == 1
    reply = await Message.objects.aget(pk=fine)
    assert reply.finish_reason == "interrupted"
    assert await ReplyRun.objects.filter(pk=broken, status=ReplyRun.Status.RUNNING).aexists()
    assert f"could not recover reply {broken}" in caplog.text
