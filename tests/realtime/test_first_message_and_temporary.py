"""Against real Daphne processes (PostgreSQL, Redis, the fake model server): a conversation
created by its first message streams its reply after the HTTP request ended, to a socket on
another process; a temporary conversation is deleted once its last socket anywhere has been
closed for the grace period, and kept when a socket comes back within it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import httpx
import pytest
import websockets
from django.conf import settings
from django.test import Client

from accounts.tokens import create_api_token
from conversations.models import Conversation, Message
from tests.conftest import require_service, uses_postgres
from tests.support.daphne import start_daphnes, stop
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, default_responder, forced_tool
from tests.support.sockets import frames_until

pytestmark = pytest.mark.django_db(transaction=True)

LONG_REPLY = " ".join(f"word{i}" for i in range(300))
GRACE = 1.5  # CHAT_TEMPORARY_GRACE_SECONDS of the servers


def _responder(body):
    if forced_tool(body) is not None:
        return default_responder(body)
    return Reply(text=LONG_REPLY, chars_per_second=800, chunk_chars=8)


@pytest.fixture(scope="module")
def model_server():
    server = FakeOpenAI(_responder).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def daphnes(django_db_setup, tmp_path_factory, model_server):
    """Two servers for the whole module (each takes a while to start); every test makes
    its own user and rows."""
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    procs, ports = start_daphnes(
        tmp_path_factory.mktemp("daphnes"),
        model_server.base_url,
        settings.REDIS_URL,
        CHAT_TEMPORARY_GRACE_SECONDS=str(GRACE),
    )
    try:
        yield ports
    finally:
        stop(procs)


def _ws(port: int, conversation_id) -> str:
    return f"ws://127.0.0.1:{port}/ws/conversations/{conversation_id}/"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@contextlib.asynccontextmanager
async def _socket(port: int, conversation_id, token: str):
    """Yield a socket that has joined (it answered a ping)."""
    url = _ws(port, conversation_id)
    async with websockets.connect(url, additional_headers=_auth(token)) as ws:
        await ws.send(json.dumps({"type": "ping"}))
        await frames_until(ws, "pong")  # an update of the conversation may come first
        yield ws


def _stored_reply(conversation_id, wait: float = 30) -> Message:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        found = Message.objects.filter(
            conversation_id=conversation_id, role="assistant", finish_reason__gt=""
        ).first()
        if found is not None:
            return found
        time.sleep(0.1)
    raise AssertionError("no reply was stored")


# --- the first message ---------------------------------------------------------------
async def _follow_from_another_process(port: int, conversation_id, token: str) -> tuple:
    async with _socket(port, conversation_id, token) as ws:
        await ws.send(json.dumps({"type": "sync", "after": 0}))
        state = (await frames_until(ws, "sync.state"))[-1]
        frames = await frames_until(ws, "generation.finished")
    return state, frames


def test_the_first_messages_reply_streams_after_the_request_ended_to_another_process(
    daphnes, alice
):
    a_port, b_port = daphnes
    token = create_api_token(user=alice, name="t").secret
    response = httpx.post(
        f"http://127.0.0.1:{a_port}/api/v1/conversations",
        json={"initial_message": {"content": "Tell me a long story"}},
        headers=_auth(token),
        timeout=30,
    )
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["message_count"] == 1
    state, frames = asyncio.run(_follow_from_another_process(b_port, created["id"], token))

    # The socket that joined late sees the user message and the text so far, then the rest.
    assert [m["id"] for m in state["messages"]] == [created["initial_message_id"]]
    generation = state["generation"]
    text = generation["text"] if generation else ""
    if generation:
        assert generation["run_id"] == created["run_id"]
    for frame in frames:
        if frame["type"] == "token" and frame["run_id"] == created["run_id"]:
            assert frame["index"] <= len(text), "a chunk is missing"
            text = text[: frame["index"]] + frame["text"]
    finished = frames[-1]
    assert finished["run_id"] == created["run_id"] and finished["finish_reason"] == "end_turn"
    assert text == LONG_REPLY == finished["message"]["content"]
    assert Message.objects.get(pk=created["run_id"]).content == LONG_REPLY
    assert Conversation.objects.filter(created_by=alice).count() == 1


def test_the_landing_form_starts_the_reply_on_the_servers_loop(daphnes, alice):
    a_port, _ = daphnes
    browser = Client()
    browser.force_login(alice)
    csrf = "c" * 32
    cookies = {"sessionid": browser.cookies["sessionid"].value, "csrftoken": csrf}
    with httpx.Client(base_url=f"http://127.0.0.1:{a_port}", cookies=cookies) as http:
        response = http.post(
            "/conversations/new/",
            data={"content": "Hello from the form", "csrfmiddlewaretoken": csrf},
            timeout=30,
        )
        empty = http.post("/conversations/new/", data={"content": " ", "csrfmiddlewaretoken": csrf})
    assert response.status_code == 302, response.text
    conversation = Conversation.objects.get(created_by=alice)
    assert response.headers["location"] == f"/conversations/{conversation.id}/"
    assert empty.status_code == 302 and empty.headers["location"] == "/"
    # The request is long over; the reply goes on and is stored whole.
    reply = _stored_reply(conversation.id)
    assert reply.finish_reason == "end_turn" and reply.content == LONG_REPLY
    question = Message.objects.get(conversation=conversation, role="user")
    assert question.content == "Hello from the form" and reply.parent_id == question.pk
    assert Conversation.objects.filter(created_by=alice).count() == 1


# --- temporary conversations -----------------------------------------------------------
def _exists(conversation_id) -> bool:
    return Conversation.objects.filter(pk=conversation_id).exists()


async def _still_there_after_grace(conversation_id) -> bool:
    """Wait the grace period and then until the delete is seen (a loaded machine may take
    a while past the grace); say whether the conversation is still there."""
    await asyncio.sleep(GRACE + 1)
    deadline = time.monotonic() + 15
    while await asyncio.to_thread(_exists, conversation_id):
        if time.monotonic() > deadline:
            return True
        await asyncio.sleep(0.2)
    return False


def _create_temporary(port: int, token: str) -> dict:
    response = httpx.post(
        f"http://127.0.0.1:{port}/api/v1/conversations",
        json={"temporary": True, "initial_message": {"content": "just between us"}},
        headers=_auth(token),
        timeout=30,
    )
    assert response.status_code == 201, response.text
    assert response.json()["temporary"] is True
    _stored_reply(response.json()["id"])
    return response.json()


async def _close_one_then_the_other(ports, conversation_id, token) -> dict[str, bool]:
    seen = {}
    a_port, b_port = ports
    async with _socket(b_port, conversation_id, token):
        async with _socket(a_port, conversation_id, token):
            pass  # A closes; B stays open
        await asyncio.sleep(GRACE + 2)
        seen["while_b_open"] = await asyncio.to_thread(_exists, conversation_id)
    seen["after_both_closed"] = await _still_there_after_grace(conversation_id)
    return seen


def test_a_temporary_conversation_lives_while_a_socket_is_open_on_any_process(daphnes, alice):
    token = create_api_token(user=alice, name="t").secret
    created = _create_temporary(daphnes[0], token)
    seen = asyncio.run(_close_one_then_the_other(daphnes, created["id"], token))
    assert seen == {"while_b_open": True, "after_both_closed": False}
    assert not Message.objects.filter(conversation_id=created["id"]).exists()


async def _reload_within_the_grace(ports, conversation_id, token) -> dict[str, bool]:
    seen = {}
    a_port, b_port = ports
    async with _socket(a_port, conversation_id, token):
        pass
    await asyncio.sleep(GRACE / 3)  # a page reload: the next socket opens elsewhere
    async with _socket(b_port, conversation_id, token):
        await asyncio.sleep(GRACE + 2)
        seen["after_the_first_grace"] = await asyncio.to_thread(_exists, conversation_id)
    await asyncio.sleep(GRACE / 3)
    seen["within_the_second_grace"] = await asyncio.to_thread(_exists, conversation_id)
    seen["after_the_second_grace"] = await _still_there_after_grace(conversation_id)
    return seen


def test_a_temporary_conversation_survives_a_reconnect_within_the_grace(daphnes, alice):
    token = create_api_token(user=alice, name="t").secret
    created = _create_temporary(daphnes[0], token)
    seen = asyncio.run(_reload_within_the_grace(daphnes, created["id"], token))
    assert seen == {
        "after_the_first_grace": True,
        "within_the_second_grace": True,
        "after_the_second_grace": False,
    }


def test_a_kept_conversation_is_not_deleted_when_its_sockets_close(daphnes, alice):
    token = create_api_token(user=alice, name="t").secret
    response = httpx.post(
        f"http://127.0.0.1:{daphnes[0]}/api/v1/conversations",
        json={"title": "Kept"},
        headers=_auth(token),
        timeout=30,
    )
    conversation_id = response.json()["id"]

    async def open_and_close():
        async with _socket(daphnes[1], conversation_id, token):
            pass
        await asyncio.sleep(GRACE + 2)

    asyncio.run(open_and_close())
    assert _exists(conversation_id)
