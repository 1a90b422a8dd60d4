"""Side by side (SPEC): `models: [a, b]` asks two models at once. Both replies stream
together as siblings answering the same message, each `generation.started` naming its
model; picking one is choosing the branch, and the next turn remembers the one picked."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import AsyncClient
from django.utils.timezone import now

from accounts.tokens import create_api_token
from agent import threads as agent_threads
from conversations.models import Conversation, Message, ReplyRun
from conversations.replies import threads as conversation_threads
from conversations.selectors import held_by_running_replies
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, message_texts
from usage import budgets
from usage.models import UsageRollup
from usage.services import reply_tokens

from .conftest import make_conversation, make_token, open_socket, receive, stitch

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flush_redis")]

A, B = "model-a", "model-b"


def answers(body: dict[str, Any]) -> Reply:
    """Each model answers in its own words, slowly enough for the two to overlap."""
    last = message_texts(body)[-1]
    return Reply(text=f"{body['model']} answers {last}: " + "word " * 12, chars_per_second=300)


@pytest.fixture
def server(settings):
    with FakeOpenAI(answers, models=[A, B]) as fake:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = fake.base_url
        settings.CHAT_MODEL = A
        settings.CHAT_MODELS = f"{A},{B}"
        yield fake


async def until_finished(comm, count: int, wait: float = 20) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    while sum(f["type"] == "generation.finished" for f in frames) < count:
        frames.append(await receive(comm, wait))
    return frames


@sync_to_async
def replies_to(question_id: Any) -> list[Message]:
    return list(Message.objects.filter(parent_id=question_id).order_by("sequence_number"))


async def test_two_models_stream_at_once_as_siblings_and_the_pick_is_remembered(server, alice):
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = open_socket(conversation.id, token=token)
    assert (await comm.connect())[0]
    await comm.send_json_to({"type": "message.send", "content": "Say hi", "models": [A, B]})
    frames = await until_finished(comm, 2)

    started = [f for f in frames if f["type"] == "generation.started"]
    assert [f["model"] for f in started] == [A, B]
    question = next(f["message"] for f in frames if f["type"] == "message.created")
    assert {f["reply_to"] for f in started} == {question["id"]}
    runs = [f["run_id"] for f in started]
    # At once: the second model's text began before the first model's ended.
    order = [f["run_id"] for f in frames if f["type"] == "token"]
    assert order.index(runs[1]) < len(order) - 1 - order[::-1].index(runs[0])
    finished = {f["run_id"]: f["message"] for f in frames if f["type"] == "generation.finished"}
    for run_id, model in zip(runs, (A, B), strict=True):
        text = stitch(frames, run_id)
        assert text == finished[run_id]["content"]
        assert text.startswith(f"{model} answers Say hi")
        assert finished[run_id]["model"] == model
    asked = sorted(body["model"] for body in server.chat_requests())
    assert asked == [A, B]

    stored = await replies_to(question["id"])
    assert [m.model for m in sorted(stored, key=lambda m: m.model)] == [A, B]
    assert all(str(m.parent_id) == question["id"] for m in stored)
    first_done = next(f["run_id"] for f in frames if f["type"] == "generation.finished")
    current = await Conversation.objects.aget(pk=conversation.pk)
    assert str(current.current_message_id) == first_done  # the first stored is kept at first
    assert not await ReplyRun.objects.filter(status=ReplyRun.Status.RUNNING).aexists()
    # The second model wrote its turn to a thread of its own, dropped once stored.
    saver = await conversation_threads.aget_checkpointer()
    side = conversation_threads.side_thread_id(conversation.pk, runs[1])
    # Dropped after its reply is announced (generation.finished does not wait for it).
    for _ in range(100):
        if await agent_threads.read_thread(saver, side) is None:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the side thread was not dropped within 5 s of its reply being stored")
    assert await agent_threads.read_thread(saver, str(conversation.pk)) is not None

    # Picking the other is choosing the branch; the next turn remembers that one only.
    other = next(r for r in runs if r != first_done)
    client = AsyncClient()
    auth = {"Authorization": f"Bearer {token}"}
    try:
        path = f"/api/v1/conversations/{conversation.id}"
        for wrong in (str(uuid.uuid4()), "not-an-id", "x" * 5000):
            refused = await client.patch(
                path, {"current_message_id": wrong}, content_type="application/json", headers=auth
            )
            assert refused.status_code in (404, 422), refused.content
        unchanged = await Conversation.objects.aget(pk=conversation.pk)
        assert str(unchanged.current_message_id) == first_done
        picked = await client.patch(
            path, {"current_message_id": other}, content_type="application/json", headers=auth
        )
        assert picked.status_code == 200, picked.content
        assert picked.json()["current_message_id"] == other
        server.clear()
        await comm.send_json_to({"type": "message.send", "content": "And then?"})
        frames = await until_finished(comm, 1)
        next_reply = next(f["message"] for f in frames if f["type"] == "generation.finished")
        assert next_reply["parent_id"] != other  # it answers the new question…
        question_two = await Message.objects.aget(pk=next_reply["parent_id"])
        assert str(question_two.parent_id) == other  # …which follows the reply picked
        (request,) = server.chat_requests()
        said = message_texts(request)
        other_text = finished[other]["content"]
        first_text = finished[first_done]["content"]
        assert other_text in said and first_text not in said
    finally:
        await comm.disconnect()
        await sync_to_async(connections.close_all)()


async def test_stop_ends_both_and_a_send_meanwhile_is_busy(server, alice):
    server.responder = lambda body: Reply(text="slow " * 200, chars_per_second=40)
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = open_socket(conversation.id, token=token)
    assert (await comm.connect())[0]
    await comm.send_json_to({"type": "message.send", "content": "Go", "models": [A, B]})
    tokens: set[str] = set()
    while len(tokens) < 2:  # both are streaming
        frame = await receive(comm, 10)
        if frame["type"] == "token":
            tokens.add(frame["run_id"])
    await comm.send_json_to({"type": "message.send", "content": "Another"})
    while (frame := await receive(comm, 10))["type"] != "error":
        pass
    assert frame["code"] == "busy"
    await comm.send_json_to({"type": "generation.stop"})
    frames = await until_finished(comm, 2)
    ended = [f for f in frames if f["type"] == "generation.finished"]
    assert {f["finish_reason"] for f in ended} == {"stopped"}
    assert {f["run_id"] for f in ended} == tokens
    assert all(f["message"]["content"].startswith("slow") for f in ended)
    contents = await sync_to_async(
        lambda: list(Message.objects.filter(conversation=conversation).values_list("content"))
    )()
    assert ("Another",) not in contents  # the busy send stored nothing
    await comm.disconnect()


async def test_a_socket_joining_mid_pair_gets_both_replies_exactly(server, alice):
    server.responder = lambda body: Reply(
        text=f"{body['model']}: " + " ".join(f"w{i}" for i in range(80)), chars_per_second=150
    )
    token, conversation = await make_token(alice), await make_conversation(alice)
    first = open_socket(conversation.id, token=token)
    assert (await first.connect())[0]
    await first.send_json_to({"type": "message.send", "content": "Count", "models": [A, B]})
    seen = 0
    while seen < 6:  # a few chunks of each in
        seen += (await receive(first, 10))["type"] == "token"
    late = open_socket(conversation.id, token=token)
    assert (await late.connect())[0]
    await late.send_json_to({"type": "sync", "after": 0})
    frames = await until_finished(late, 2)
    state = next(f for f in frames if f["type"] == "sync.state")
    generations = state["generations"]
    assert [g["model"] for g in generations] == [A, B]
    assert state["generation"] == generations[0]
    finished = {
        f["run_id"]: f["message"]["content"] for f in frames if f["type"] == "generation.finished"
    }
    for generation in generations:
        text = stitch(frames, generation["run_id"], generation["text"])
        assert text == finished[generation["run_id"]]
    await until_finished(first, 2)
    await first.disconnect()
    await late.disconnect()


@pytest.mark.parametrize(
    "models",
    [[A], [A, B, A], [A, A], [A, ""], ["gpt-nowhere", A], "model-a", [A, 7]],
)
async def test_a_pair_that_is_not_two_models_on_offer_is_refused_and_stores_nothing(
    server, alice, models
):
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = open_socket(conversation.id, token=token)
    assert (await comm.connect())[0]
    await comm.send_json_to({"type": "message.send", "content": "Hi", "models": models})
    frame = await receive(comm, 5)
    assert frame["type"] == "error" and frame["code"] == "invalid", frame
    await comm.disconnect()
    assert not await Message.objects.filter(conversation=conversation).aexists()
    assert server.chat_requests() == []


async def test_over_http_both_replies_are_answered_and_both_count_against_the_budget(
    server, alice, settings
):
    settings.CHAT_MONTHLY_TOKEN_BUDGET = 1_000_000
    settings.CHAT_BUDGET_RESERVE_TOKENS = 500
    conversation = await make_conversation(alice)
    token = (await sync_to_async(create_api_token)(user=alice, name="t")).secret
    client = AsyncClient()
    auth = {"Authorization": f"Bearer {token}"}
    held: list[int] = []

    async def watch() -> None:  # what the running pair holds against the budget
        while True:
            held.append(await sync_to_async(held_by_running_replies)(alice))
            await asyncio.sleep(0.02)

    watcher = asyncio.ensure_future(watch())
    try:
        response = await client.post(
            f"/api/v1/conversations/{conversation.id}/messages",
            {"content": "Compare", "models": [A, B]},
            content_type="application/json",
            headers=auth,
        )
        assert response.status_code == 201, response.content
        body = response.json()
        pair = body["assistant_messages"]
        assert [m["model"] for m in pair] == [A, B]
        assert body["assistant_message"] == pair[0]
        assert {m["parent_id"] for m in pair} == {body["user_message"]["id"]}
        assert all(m["content"].startswith(m["model"]) for m in pair)
        # Both hold a reservation while they run, and both are counted once stored.
        assert max(held) >= 2 * 500
        stored = [await Message.objects.aget(pk=m["id"]) for m in pair]
        each = [sum(reply_tokens(m.metadata)) for m in stored]
        assert all(n > 0 for n in each)
        used = await sync_to_async(budgets.used_since)(alice.pk, budgets.month_start(now()))
        assert used == sum(each)
        rollup = UsageRollup.objects.filter(user=alice).values_list("replies", flat=True)
        assert sum(await sync_to_async(list)(rollup)) == 2
    finally:
        watcher.cancel()
        await sync_to_async(connections.close_all)()
