"""A conversation created by its first message (`POST /conversations` with `initial_message`,
or the landing's form): one conversation, the message stored, the reply run as for
`message.send`; a refused message creates nothing."""

from __future__ import annotations

import asyncio
import io

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import AsyncClient
from PIL import Image

from accounts.tokens import create_api_token
from conversations import attachments, services
from conversations.models import Conversation, Message
from conversations.realtime import ratelimit
from conversations.realtime.hub import aclose_hub
from conversations.realtime.redis import aclose_redis, get_redis
from conversations.replies import turns
from tests.support.fake_turn import FakeAgent

pytestmark = pytest.mark.django_db(transaction=True)
API = "/api/v1"
CARD = "4111 1111 1111 1111"


@pytest.fixture
def echo_agent(monkeypatch):
    agent = FakeAgent(reply=lambda text: ["echo: ", text], delay=0)
    monkeypatch.setattr(turns, "astart_turn", agent)
    return agent


@pytest.fixture(autouse=True)
async def cleanup():
    ratelimit.reset_local_rates()
    yield
    await aclose_hub()  # a reply still running is stored before the test's loop ends
    await aclose_redis()
    await sync_to_async(connections.close_all)()


@pytest.fixture
async def post(alice):
    token = (await sync_to_async(create_api_token)(user=alice, name="t")).secret
    client = AsyncClient()

    async def call(body):
        return await client.post(
            f"{API}/conversations",
            body,
            content_type="application/json",
            headers={"Authorization": f"Bearer {token}"},
        )

    return call


async def _reply(run_id: str, wait: float = 10) -> Message:
    async with asyncio.timeout(wait):
        while True:
            found = await Message.objects.filter(pk=run_id).afirst()
            if found is not None:
                return found
            await asyncio.sleep(0.02)


async def _count(user) -> int:
    return await Conversation.objects.filter(created_by=user).acount()


async def test_the_first_message_creates_one_conversation_and_its_reply_runs(
    post, alice, echo_agent
):
    response = await post(
        {"initial_message": {"content": "Plan a trip to Jeju", "client_id": "c-1"}}
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["message_count"] == 1 and body["title"] == "Plan a trip to Jeju"
    assert body["temporary"] is False and body["pinned"] is False
    assert body["current_message_id"] == body["initial_message_id"]
    question = await Message.objects.aget(pk=body["initial_message_id"])
    assert (question.role, question.content, question.client_id) == (
        "user",
        "Plan a trip to Jeju",
        "c-1",
    )
    reply = await _reply(body["run_id"])
    assert reply.content == "echo: Plan a trip to Jeju" and reply.parent_id == question.pk
    assert await _count(alice) == 1
    assert echo_agent.calls == ["Plan a trip to Jeju"]


async def test_a_bare_string_is_taken_as_the_first_messages_content(post, alice, echo_agent):
    response = await post({"title": "Mine", "initial_message": "hello"})
    assert response.status_code == 201
    assert (await _reply(response.json()["run_id"])).content == "echo: hello"
    assert response.json()["title"] == "Mine"


async def test_without_a_message_the_conversation_is_created_empty(post, alice, echo_agent):
    response = await post({"title": "Empty on purpose"})
    assert response.status_code == 201
    assert response.json()["message_count"] == 0
    assert response.json()["initial_message_id"] is None
    assert echo_agent.calls == []


@pytest.mark.parametrize(
    ("message", "status", "code"),
    [
        ({"content": "x" * 40_000}, 413, "too_long"),
        ({"content": "a\u0000b"}, 422, None),
        ({"content": "   "}, 422, "invalid"),
        ({"content": "hi", "colour": "red"}, 422, None),
        ({"content": "hi", "client_id": ""}, 422, None),
        ({"content": "hi", "attachments": ["not-an-id"]}, 422, "invalid"),
        ({"content": f"my card is {CARD}"}, 409, "sensitive"),
    ],
)
async def test_a_refused_first_message_creates_no_conversation(
    post, alice, echo_agent, message, status, code
):
    response = await post({"title": "t", "initial_message": message})
    assert response.status_code == status, response.content
    if code is not None:
        assert response.json()["error"]["code"] == code
    assert await _count(alice) == 0
    assert not await Message.objects.aexists()
    assert echo_agent.calls == []


async def test_sensitive_information_is_refused_with_findings_then_stored_when_confirmed(
    post, alice, echo_agent
):
    text = f"my card is {CARD}"
    refused = await post({"initial_message": {"content": text}})
    error = refused.json()["error"]
    assert refused.status_code == 409 and error["can_confirm"] is True
    assert text[error["findings"][0]["start"] : error["findings"][0]["end"]] == CARD
    assert await _count(alice) == 0
    stored = await post({"initial_message": {"content": text, "confirm_sensitive": True}})
    assert stored.status_code == 201
    question = await Message.objects.aget(pk=stored.json()["initial_message_id"])
    assert question.metadata["sensitive"] == ["card"]


async def test_a_rate_limited_first_message_creates_no_conversation(
    post, alice, echo_agent, settings
):
    settings.CHAT_RATE_LIMIT = "1/m"
    client = get_redis()
    if client is not None:  # a window left by an earlier run for the same user id
        keys = [k async for k in client.scan_iter(f"{ratelimit.KEY_PREFIX}*")]
        if keys:
            await client.delete(*keys)
    await ratelimit.acheck_rate(user_id=alice.pk)  # the minute's one message
    response = await post({"initial_message": {"content": "one more"}})
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert await _count(alice) == 0


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


@sync_to_async
def _upload(user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    conversation = services.create_conversation(user=user, title="where it was uploaded")
    return attachments.upload(user=user, conversation_id=conversation.id, name="a.png", data=_png())


async def test_an_attachment_not_of_the_new_conversation_is_not_found_and_nothing_is_created(
    post, alice, bob, echo_agent, settings, tmp_path
):
    theirs = await _upload(bob, settings, tmp_path)
    mine_elsewhere = await _upload(alice, settings, tmp_path)
    before = await _count(alice)
    for attachment in (theirs, mine_elsewhere):
        response = await post(
            {"initial_message": {"content": "look", "attachments": [str(attachment.id)]}}
        )
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert await _count(alice) == before
    assert not await Message.objects.aexists()
    assert await attachments.Attachment.objects.filter(message=None).acount() == 2


async def test_an_unknown_model_or_project_creates_no_conversation(post, alice, bob, echo_agent):
    project = await sync_to_async(services.Project.objects.create)(owner=bob, name="Bob's")
    for extra in ({"model": "no-such-model"}, {"project_id": project.pk}):
        response = await post({**extra, "initial_message": {"content": "hi"}})
        assert response.status_code in (404, 422), response.content
    assert await _count(alice) == 0
    assert not await Message.objects.aexists()


# --- the landing's form (conversations/new/) ---------------------------------------------
@pytest.fixture
async def browser(alice):
    client = AsyncClient()
    await client.aforce_login(alice)
    return client


async def test_the_form_creates_the_conversation_with_its_first_message(browser, alice, echo_agent):
    response = await browser.post("/conversations/new/", {"content": "Hello from the landing"})
    assert response.status_code == 302
    conversation = await Conversation.objects.aget(created_by=alice)
    assert response["Location"] == f"/conversations/{conversation.id}/"
    run = await conversation.reply_runs.afirst()
    assert (await _reply(run.pk)).content == "echo: Hello from the landing"
    assert not conversation.temporary


async def test_the_form_can_start_a_temporary_conversation(browser, alice, echo_agent):
    response = await browser.post("/conversations/new/", {"content": "psst", "temporary": "1"})
    assert response.status_code == 302
    assert (await Conversation.objects.aget(created_by=alice)).temporary is True


async def test_the_form_without_a_message_creates_nothing(browser, alice, echo_agent):
    for data in ({}, {"content": "   "}, {"title": "only a title"}):
        response = await browser.post("/conversations/new/", data)
        assert response.status_code == 302 and response["Location"] == "/"
    assert await _count(alice) == 0


@pytest.mark.parametrize(
    ("content", "status"), [("x" * 40_000, 413), (f"card {CARD}", 409), ("a\u0000b", 400)]
)
async def test_the_form_refuses_a_bad_message_and_creates_nothing(
    browser, alice, echo_agent, content, status
):
    response = await browser.post("/conversations/new/", {"content": content})
    assert response.status_code == status
    assert await _count(alice) == 0
