"""The app against a real small model (SmolLM2-135M behind llama-cpp-python's server).

What a fake hides and this shows: the server sends no usage in its stream, ignores tools,
and a 135M model's answers and summaries are whatever they are. So these tests assert on
what a user and the protocol see (a reply streams, stops, is stored) and on what the
model was given (through the recording proxy), never on the model's wording.
"""

from __future__ import annotations

import asyncio
import logging
import re

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from conversations import services
from conversations.models import Message
from conversations.replies import threads
from knowledge.services import upload_document
from tests.knowledge.recall import CORPUS_DIR
from tests.realtime.conftest import make_token, open_socket, receive, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flush_redis")]

BRIEF = "Answer in one short sentence."
TURN_SECONDS = 120


@pytest.fixture
def on_real_model(settings, real_model):
    settings.OPENAI_API_KEY = "local"
    settings.OPENAI_BASE_URL = real_model.base_url
    settings.CHAT_MODEL = real_model.model_id
    settings.CHAT_MODELS = "auto"
    settings.CHAT_CONTEXT_WINDOW = 8192
    real_model.recorder.requests.clear()
    return real_model


@pytest.fixture
def no_errors_logged(caplog):
    caplog.set_level(logging.WARNING)
    yield
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []


async def new_conversation(user, **fields):
    return await sync_to_async(services.create_conversation)(
        user=user, title="Real model", system_prompt=BRIEF, temperature=0, **fields
    )


async def ask(comm, text: str) -> list[dict]:
    await comm.send_json_to({"type": "message.send", "content": text})
    return await receive_until(comm, "generation.finished", wait=TURN_SECONDS)


def streamed_text(frames: list[dict]) -> str:
    text = ""
    for frame in frames:
        if frame["type"] == "token":
            assert frame["index"] == len(text)  # nothing missing, nothing repeated
            text += frame["text"]
    return text


async def test_a_reply_streams_and_is_stored(on_real_model, alice, no_errors_logged):
    conversation = await new_conversation(alice)
    comm = open_socket(conversation.id, token=await make_token(alice))
    assert (await comm.connect())[0]
    frames = await ask(comm, "Say hello to me.")
    finished = frames[-1]
    text = streamed_text(frames)
    assert text.strip() and text == finished["message"]["content"]
    assert finished["finish_reason"] == "end_turn"
    reply = await Message.objects.aget(pk=finished["run_id"])
    assert (reply.content, reply.model) == (text, "smollm2-135m")
    # llama.cpp's server streams no usage: the counts are estimates and the ledger says so.
    assert reply.metadata["context"]["usage_estimated"] is True
    assert reply.metadata["context"]["actual_input_tokens"] is None
    body = on_real_model.recorder.chat_requests()[-1]
    assert body["model"] == "smollm2-135m" and body["temperature"] == 0
    assert BRIEF in body["messages"][0]["content"]
    await comm.disconnect()


async def test_a_stop_mid_reply_stores_what_was_streamed(on_real_model, alice, no_errors_logged):
    conversation = await sync_to_async(services.create_conversation)(user=alice, temperature=0)
    comm = open_socket(conversation.id, token=await make_token(alice))
    assert (await comm.connect())[0]
    await comm.send_json_to(
        {"type": "message.send", "content": "Write a long story about a dragon and a knight."}
    )
    frames = await receive_until(comm, "token", wait=TURN_SECONDS)
    await comm.send_json_to({"type": "generation.stop"})
    frames += await receive_until(comm, "generation.finished", wait=TURN_SECONDS)
    finished = frames[-1]
    assert finished["finish_reason"] == "stopped"
    reply = await Message.objects.aget(pk=finished["run_id"])
    assert reply.finish_reason == "stopped"
    assert reply.content and reply.content == streamed_text(frames)
    await comm.disconnect()


async def test_a_question_about_a_document_gets_its_passage_into_the_models_request(
    on_real_model, alice, no_errors_logged
):
    data = (CORPUS_DIR / "handbook_en.md").read_bytes()
    await sync_to_async(upload_document)(user=alice, filename="handbook_en.md", data=data)
    conversation = await new_conversation(alice)
    comm = open_socket(conversation.id, token=await make_token(alice))
    assert (await comm.connect())[0]
    frames = await ask(comm, "How many days of annual leave do we get?")
    assert frames[-1]["finish_reason"] == "end_turn"
    sources = [f for f in frames if f["type"] == "sources"]
    assert sources and "Annual leave" in sources[0]["items"][0]["section"]
    answering = [b for b in on_real_model.recorder.chat_requests() if b.get("stream")][-1]
    assert "25 days of paid vacation" in answering["messages"][0]["content"]
    await comm.disconnect()


@pytest.mark.timeout(360)  # twelve turns of a CPU model, beside the rest of the suite
async def test_twelve_turns_fold_memory_with_a_checked_summary_or_the_users_words(
    on_real_model, alice, no_errors_logged
):
    conversation = await new_conversation(alice)
    comm = open_socket(conversation.id, token=await make_token(alice))
    assert (await comm.connect())[0]
    said = ["My locker code is 4417."] + [
        f"Tell me one fact about the number {n}." for n in range(11)
    ]
    notes: list[dict] = []
    for text in said:
        frames = await ask(comm, text)
        assert frames[-1]["finish_reason"] in ("end_turn", "max_tokens")
        notes += [f for f in frames if f["type"] == "thinking" and f["step"] == "memory"]
    codes = {n["code"] for n in notes}
    folded = codes & {"memory.summarized", "memory.kept_words_refused", "memory.kept_words_failed"}
    assert folded  # past ten messages the memory rules acted, whatever the 135M model wrote
    memory = await threads.aread_agent_memory(conversation)
    assert memory["summaries"]  # and the older messages left the window either way
    assert len(memory["messages"]) <= 11
    stated = set(re.findall(r"\d{2,}", " ".join(said)))
    for summary in memory["summaries"]:  # a summary that replaced messages passed the checks
        assert summary.strip()
        assert set(re.findall(r"\d{2,}", summary)) <= stated
    await comm.disconnect()


def test_the_models_list_is_the_servers(on_real_model, alice):
    client = Client()
    client.force_login(alice)
    items = client.get("/api/v1/models").json()["items"]
    assert [m["id"] for m in items] == ["smollm2-135m"]


async def test_sync_after_the_reply_returns_it(on_real_model, alice):
    conversation = await new_conversation(alice)
    comm = open_socket(conversation.id, token=await make_token(alice))
    assert (await comm.connect())[0]
    frames = await ask(comm, "Name a colour.")
    await comm.send_json_to({"type": "sync", "after": 0})
    state = await receive(comm, 10)
    while state["type"] != "sync.state":
        state = await receive(comm, 10)
    assert [m["id"] for m in state["messages"]][-1] == frames[-1]["run_id"]
    assert state["generation"] is None
    await comm.disconnect()


async def test_the_first_reply_gets_a_model_title_or_keeps_its_first_words(on_real_model, alice):
    from conversations.models import Conversation

    conversation = await sync_to_async(services.create_conversation)(user=alice, temperature=0)
    comm = open_socket(conversation.id, token=await make_token(alice))
    assert (await comm.connect())[0]
    await ask(comm, "How do I make a cup of green tea?")
    for _ in range(200):  # the title is written after the reply, in the background
        if on_real_model.recorder.chat_requests()[-1].get("stream") is False:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)
    found = await Conversation.objects.aget(pk=conversation.pk)
    if found.title_source == Conversation.TitleSource.MODEL:
        assert 0 < len(found.title) <= 60 and "\n" not in found.title
    else:  # the 135M model's title was unusable: the first words stay
        assert found.title == "How do I make a cup of green tea?"
    await comm.disconnect()


async def test_an_automatic_summary_rolls_on_with_what_was_said_since(on_real_model, alice):
    from conversations.replies import summaries
    from tests.support import seed

    conversation = await new_conversation(alice)

    def say(*contents: str) -> None:
        for i, content in enumerate(contents):
            role = "user" if i % 2 == 0 else "assistant"
            seed.add_message(
                conversation_id=conversation.id,
                role=role,
                content=content,
                created_by=alice if role == "user" else None,
            )

    await sync_to_async(say)(*[f"We plan the trip, step {i}." for i in range(51)])
    first = await summaries.maybe_auto_summarize(conversation.id)
    assert first is not None and first.summary  # written anew: the first one
    await sync_to_async(say)(*[f"We book the hotel, night {i}." for i in range(20)])
    second = await summaries.maybe_auto_summarize(conversation.id)
    assert second is not None and second.summary
    request = on_real_model.recorder.chat_requests()[-1]
    sent = request["messages"][-1]["content"]
    # The real server was given the summary so far and only what came since.
    assert sent.startswith("Summary so far:\n" + first.summary)
    assert "night 19" in sent and "step 50" not in sent.split("The conversation since:")[1]
