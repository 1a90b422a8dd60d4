"""A conversation's model and instructions reach the model server; titles; refused tools."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from accounts.preferences import update_user_settings
from agent.checkpoint import close_checkpointers
from conversations import services
from conversations.models import Conversation
from conversations.realtime.hub import aclose_hub, get_hub
from conversations.replies import Ask, start_reply
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, message_texts
from tests.support.sink import Sink
from tests.support.turns import ask

pytestmark = pytest.mark.django_db(transaction=True)


def echo(body: dict) -> Reply:
    users = message_texts(body, "user")
    return Reply(text=f"Echo: {users[-1] if users else ''}")


@pytest.fixture
async def model(settings):
    with FakeOpenAI(echo, models=["fake-a", "fake-b"]) as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        settings.CHAT_MODEL = "fake-a"
        settings.CHAT_MODELS = "fake-a,fake-b"
        settings.CHAT_MODEL_CONTEXT = "fake-b=4000"
        yield server
    await aclose_hub()
    await close_checkpointers()
    await sync_to_async(connections.close_all)()


async def wait_for(check, seconds: float = 5.0):
    """Poll `check` (sync, database) until it returns something truthy."""
    for _ in range(int(seconds / 0.05)):
        found = await sync_to_async(check)()
        if found:
            return found
        await asyncio.sleep(0.05)
    return await sync_to_async(check)()


def chat_requests(server: FakeOpenAI) -> list[dict]:
    return server.chat_requests()


async def test_the_conversations_model_and_instructions_are_what_the_server_receives(model, alice):
    await sync_to_async(update_user_settings)(user=alice, custom_instructions="Call me Captain.")
    conversation = await sync_to_async(services.create_conversation)(
        user=alice, model="fake-b", system_prompt="Answer like a pirate.", temperature=0.3
    )
    reply, _frames = await ask(alice, conversation, content="hello there")

    body = chat_requests(model)[-1]
    assert body["model"] == "fake-b"
    assert body["temperature"] == 0.3
    system = message_texts(body, "system")[0]
    assert "Call me Captain." in system and "Answer like a pirate." in system
    assert system.index("Call me Captain.") < system.index("Answer like a pirate.")
    assert reply.model == "fake-b"
    ledger = reply.metadata["context"]
    assert ledger["model"] == "fake-b"
    assert ledger["window"] == 4000  # CHAT_MODEL_CONTEXT: the memory rules use this window
    assert ledger["instructions_tokens"] > 0


async def test_a_conversation_without_a_model_uses_the_owners_default_then_the_sites(
    model, alice, bob
):
    await sync_to_async(update_user_settings)(user=alice, default_model="fake-b")
    mine = await sync_to_async(services.create_conversation)(user=alice)
    theirs = await sync_to_async(services.create_conversation)(user=bob)
    await ask(alice, mine, content="hi")
    await ask(bob, theirs, content="hi")
    models = [b["model"] for b in chat_requests(model)]
    assert models == ["fake-b", "fake-a"]
    assert "temperature" not in chat_requests(model)[-1]  # null: the server's default


async def test_changing_the_model_mid_conversation_keeps_the_memory(model, alice):
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    await ask(alice, conversation, content="My locker code is 4417.")
    await sync_to_async(services.update_conversation)(conversation=conversation, model="fake-b")
    await ask(alice, conversation, content="What is my locker code?")
    last = chat_requests(model)[-1]
    assert last["model"] == "fake-b"
    assert "4417" in json.dumps(last["messages"])


async def test_a_model_taken_off_the_list_falls_back_to_the_default(model, alice, settings):
    conversation = await sync_to_async(services.create_conversation)(user=alice, model="fake-b")
    settings.CHAT_MODELS = "fake-a"
    reply, _ = await ask(alice, conversation, content="still there?")
    assert chat_requests(model)[-1]["model"] == "fake-a"
    assert reply.model == "fake-a"


async def test_regenerate_with_another_model_writes_that_reply_only(model, alice):
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    first, _ = await ask(alice, conversation, content="Tell me a joke.")
    again, _ = await ask(
        alice, conversation, content=None, kind="regenerate", message_id=first.pk, model="fake-b"
    )
    assert (first.model, again.model) == ("fake-a", "fake-b")
    assert again.parent_id == first.parent_id
    refreshed = await sync_to_async(Conversation.objects.get)(pk=conversation.pk)
    assert refreshed.model == ""  # the conversation's own choice did not change


async def test_an_unknown_model_for_a_regenerate_is_refused_and_nothing_runs(model, alice):
    from core.errors import Invalid

    conversation = await sync_to_async(services.create_conversation)(user=alice)
    first, _ = await ask(alice, conversation, content="Tell me a joke.")
    with pytest.raises(Invalid):
        await start_reply(user=alice, ask=Ask.regenerate(first.pk, model="gpt-99"))
    assert len(chat_requests(model)) == 1


async def test_the_model_titles_an_untitled_conversation_after_its_first_reply(model, alice):
    model.title_responder = lambda body: Reply(text='"Pirate greetings."')
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    hub, sink = get_hub(), Sink()
    await hub.join(conversation.id, sink)
    await ask(alice, conversation, content="hello there, how are pirates greeted?")

    def titled():
        found = Conversation.objects.get(pk=conversation.pk)
        return found if found.title_source == Conversation.TitleSource.MODEL else None

    found = await wait_for(titled)
    assert found is not None and found.title == "Pirate greetings"  # unwrapped, no period
    await hub.flushed(conversation.id)
    updates = [f for f in sink.frames if f["type"] == "conversation.updated"]
    assert updates[-1]["conversation"]["title"] == "Pirate greetings"
    assert model.title_requests[0]["model"] == "fake-a"

    await ask(alice, conversation, content="and in Korean?")
    await asyncio.sleep(0.3)
    assert len(model.title_requests) == 1  # only after the first exchange


async def test_a_title_the_user_gave_is_never_replaced(model, alice):
    conversation = await sync_to_async(services.create_conversation)(
        user=alice, title="My own title"
    )
    await ask(alice, conversation, content="hello there")
    await asyncio.sleep(0.3)
    refreshed = await sync_to_async(Conversation.objects.get)(pk=conversation.pk)
    assert refreshed.title == "My own title"
    assert model.title_requests == []


async def test_a_title_in_another_language_than_the_conversation_is_not_used(model, alice):
    model.title_responder = lambda body: Reply(text="Weekend plans")
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    await ask(alice, conversation, content="이번 주말에 부산 여행 계획을 세워 줘")
    await wait_for(lambda: model.title_requests)
    await asyncio.sleep(0.3)
    refreshed = await sync_to_async(Conversation.objects.get)(pk=conversation.pk)
    assert refreshed.title == "이번 주말에 부산 여행 계획을 세워 줘"
    assert refreshed.title_source == Conversation.TitleSource.FIRST_WORDS


async def test_the_offline_model_keeps_the_first_words_title(alice, settings):
    settings.OPENAI_API_KEY = None
    settings.OFFLINE_MODEL_CHARS_PER_SECOND = 0
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    try:
        await ask(alice, conversation, content="hello offline world")
        await asyncio.sleep(0.3)
        refreshed = await sync_to_async(Conversation.objects.get)(pk=conversation.pk)
        assert refreshed.title == "hello offline world"
        assert refreshed.title_source == Conversation.TitleSource.FIRST_WORDS
    finally:
        await aclose_hub()
        await close_checkpointers()
        await sync_to_async(connections.close_all)()


async def test_a_long_first_message_titles_the_conversation_with_its_first_words_only(
    alice, settings
):
    settings.OPENAI_API_KEY = None
    settings.OFFLINE_MODEL_CHARS_PER_SECOND = 0
    first = (
        "Can you plan a four-day trip to Jeju for two people in late April, with good "
        "seafood restaurants, an easy hike and a rainy-day option? We arrive by ferry."
    )
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    try:
        await ask(alice, conversation, content=first)
        refreshed = await sync_to_async(Conversation.objects.get)(pk=conversation.pk)
        assert refreshed.title == "Can you plan a four-day trip to Jeju…"
        assert len(refreshed.title) <= services.AUTO_TITLE_TARGET_LENGTH
    finally:
        await aclose_hub()
        await close_checkpointers()
        await sync_to_async(connections.close_all)()


async def test_editing_the_first_message_retitles_unless_the_person_named_it(alice, settings):
    settings.OPENAI_API_KEY = None
    settings.OFFLINE_MODEL_CHARS_PER_SECOND = 0
    try:
        named = await sync_to_async(services.create_conversation)(user=alice)
        untouched = await sync_to_async(services.create_conversation)(user=alice)
        for conversation in (named, untouched):
            await ask(alice, conversation, content="Recipe for kimchi stew")
        await sync_to_async(services.rename_conversation)(conversation=named, title="Dinner ideas")
        for conversation in (named, untouched):
            first = await conversation.messages.filter(role="user").afirst()
            await ask(alice, conversation, kind="edit", message_id=first.pk, content="Bibimbap?")
        assert (await Conversation.objects.aget(pk=untouched.pk)).title == "Bibimbap?"
        assert (await Conversation.objects.aget(pk=named.pk)).title == "Dinner ideas"
        # A later message never renames it.
        await ask(alice, untouched, content="And a side dish, please.")
        assert (await Conversation.objects.aget(pk=untouched.pk)).title == "Bibimbap?"
    finally:
        await aclose_hub()
        await close_checkpointers()
        await sync_to_async(connections.close_all)()


async def test_a_server_that_refuses_tools_still_answers_and_is_not_sent_them_again(model, alice):
    def no_tools(body: dict) -> Reply:
        if body.get("tools"):
            return Reply(status=400, error_message="this model does not support tools")
        return echo(body)

    model.responder = no_tools
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    reply, frames = await ask(alice, conversation, content="what is 12*7?")
    assert reply.finish_reason == "end_turn" and reply.content == "Echo: what is 12*7?"
    codes = [f["code"] for f in frames if f["type"] == "thinking"]
    assert "generate.no_tools" in codes

    before = len(chat_requests(model))
    second, _ = await ask(alice, conversation, content="and 3*3?")
    assert second.finish_reason == "end_turn"
    later = chat_requests(model)[before:]
    assert later and not any(b.get("tools") for b in later)  # remembered: no refused call


async def test_a_server_error_that_is_not_about_tools_still_fails_the_reply(model, alice):
    model.responder = lambda body: Reply(status=400, error_message="context length exceeded")
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    reply, _frames = await ask(alice, conversation, content="hello")
    assert reply.finish_reason == "error"
    # Refused as too long even after fitting: named, in words for people, not the server's.
    assert reply.metadata["error"]["code"] == "model_context"
    assert "context length exceeded" not in reply.metadata["error"]["message"]
