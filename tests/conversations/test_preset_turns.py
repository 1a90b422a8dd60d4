"""A conversation started from a preset: each turn reads the preset as it is then."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from accounts.preferences import update_user_settings
from agent.checkpoint import close_checkpointers
from conversations import services
from conversations.realtime.hub import aclose_hub
from knowledge.services import upload_document
from presets import services as presets
from presets.schemas import PresetIn
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, message_texts
from tests.support.turns import ask

pytestmark = pytest.mark.django_db(transaction=True)

LEAVE = b"# Leave policy\n\nEvery employee has twenty days of annual leave each year.\n"
PARKING = b"# Parking policy\n\nThe parking permit costs thirty dollars a month at the garage.\n"


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
        yield server
    await aclose_hub()
    await close_checkpointers()
    await sync_to_async(connections.close_all)()


def answering(server: FakeOpenAI) -> dict:
    """The last request that asked for the reply itself (not routing, not a summary)."""
    return server.chat_requests()[-1]


async def make_preset(user, **fields):
    data = PresetIn(name=fields.pop("name", "Pirate"), **fields)
    return await sync_to_async(presets.create_preset)(user=user, data=data)


async def start(user, preset, **fields):
    return await sync_to_async(services.create_conversation)(
        user=user, preset=preset.pk if preset else None, **fields
    )


async def test_the_presets_model_temperature_and_instructions_reach_the_model(model, alice):
    await sync_to_async(update_user_settings)(user=alice, custom_instructions="Call me Captain.")
    preset = await make_preset(
        alice, instructions="Answer like a pirate.", model="fake-b", temperature=0.3
    )
    conversation = await start(alice, preset, system_prompt="Keep it short.")
    reply, _frames = await ask(alice, conversation, content="hello there")

    body = answering(model)
    assert (body["model"], body["temperature"]) == ("fake-b", 0.3)
    system = message_texts(body, "system")[0]
    # The user's standing instructions, then the preset's, then the conversation's own.
    order = [system.index(t) for t in ("Call me Captain.", "Answer like a pirate.", "short.")]
    assert order == sorted(order)
    assert reply.model == "fake-b"


async def test_the_conversations_own_choices_win_over_its_presets(model, alice):
    preset = await make_preset(alice, model="fake-b", temperature=0.3)
    conversation = await start(alice, preset, model="fake-a", temperature=1.1)
    await ask(alice, conversation, content="hello")
    body = answering(model)
    assert (body["model"], body["temperature"]) == ("fake-a", 1.1)


async def test_editing_a_preset_changes_the_next_turn_not_the_last(model, alice):
    preset = await make_preset(alice, instructions="Answer like a pirate.")
    conversation = await start(alice, preset)
    first, _ = await ask(alice, conversation, content="first question")
    assert "Answer like a pirate." in message_texts(answering(model), "system")[0]

    await sync_to_async(presets.update_preset)(
        user=alice, preset_id=preset.pk, changes={"instructions": "Answer like a poet."}
    )
    await ask(alice, conversation, content="second question")
    system = message_texts(answering(model), "system")[0]
    assert "Answer like a poet." in system and "pirate" not in system
    await sync_to_async(first.refresh_from_db)()
    assert first.content == "Echo: first question"  # what was answered stays


async def test_a_deleted_preset_leaves_its_conversation_working_on_the_defaults(model, alice):
    preset = await make_preset(alice, instructions="Answer like a pirate.", model="fake-b")
    conversation = await start(alice, preset)
    await ask(alice, conversation, content="before")
    await sync_to_async(presets.delete_preset)(user=alice, preset_id=preset.pk)

    await sync_to_async(conversation.refresh_from_db)()
    assert conversation.preset_id is None
    reply, _ = await ask(alice, conversation, content="after")
    assert reply.content == "Echo: after"
    body = answering(model)
    assert body["model"] == "fake-a"
    assert "pirate" not in " ".join(message_texts(body, "system"))


async def test_a_preset_that_is_no_longer_shared_stops_applying_to_others(model, alice, bob):
    alice.is_staff = True
    await sync_to_async(alice.save)()
    preset = await make_preset(alice, instructions="Answer like a pirate.", shared=True)
    conversation = await start(bob, preset)
    await ask(bob, conversation, content="one")
    assert "pirate" in message_texts(answering(model), "system")[0]
    await sync_to_async(presets.update_preset)(
        user=alice, preset_id=preset.pk, changes={"shared": False}
    )
    reply, _ = await ask(bob, conversation, content="two")
    assert reply.content == "Echo: two"
    assert "pirate" not in " ".join(message_texts(answering(model), "system"))


async def test_a_preset_with_chosen_documents_searches_only_those(
    model, alice, embed_before_answering
):
    leave = await sync_to_async(upload_document)(user=alice, filename="leave.md", data=LEAVE)
    await sync_to_async(upload_document)(user=alice, filename="parking.md", data=PARKING)
    question = "How much does the parking permit cost at the garage?"

    # Without a preset, the parking policy answers the question (the control).
    plain = await start(alice, None)
    _reply, frames = await ask(alice, plain, content=question)
    sent = " ".join(message_texts(answering(model)))
    assert "thirty dollars" in sent
    assert any(f["type"] == "sources" for f in frames)

    preset = await make_preset(
        alice, name="Leave helper", knowledge={"scope": "documents", "ids": [leave.pk]}
    )
    limited = await start(alice, preset)
    _reply, frames = await ask(alice, limited, content=question)
    sent = " ".join(message_texts(answering(model)))
    assert "thirty dollars" not in sent
    titles = [i["document_title"] for f in frames if f["type"] == "sources" for i in f["items"]]
    assert "parking" not in " ".join(titles).lower()


async def test_a_project_preset_searches_the_files_attached_in_that_projects_chats(
    model, alice, embed_before_answering
):
    project = await sync_to_async(alice.projects.create)(name="Garage")
    in_project = await start(alice, None, project=project.pk)
    await sync_to_async(upload_document)(
        user=alice, filename="parking.md", data=PARKING, scope=in_project.pk
    )
    await sync_to_async(upload_document)(user=alice, filename="leave.md", data=LEAVE)
    preset = await make_preset(
        alice, name="Garage helper", knowledge={"scope": "project", "ids": [project.pk]}
    )
    conversation = await start(alice, preset)
    await ask(alice, conversation, content="How much does the parking permit cost at the garage?")
    assert "thirty dollars" in " ".join(message_texts(answering(model)))
    await ask(alice, conversation, content="How many days of annual leave does an employee have?")
    assert "twenty days" not in " ".join(message_texts(answering(model)))
