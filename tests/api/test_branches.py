"""Branches through the JSON API: regenerate, edit, continue, switch, lists, export/import."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import AsyncClient

from accounts.tokens import create_api_token
from conversations import services
from conversations.models import Conversation, Message
from conversations.replies import turns
from tests.support.fake_turn import FakeAgent

pytestmark = pytest.mark.django_db(transaction=True)


class Api:
    """Alice's async API client (Bearer token)."""

    def __init__(self, token: str) -> None:
        self.client = AsyncClient()
        self.auth = {"Authorization": f"Bearer {token}"}

    async def post(self, path: str, body: dict | None = None):
        return await self.client.post(
            "/api/v1" + path, body or {}, content_type="application/json", headers=self.auth
        )

    async def get(self, path: str, **params):
        return await self.client.get("/api/v1" + path, params, headers=self.auth)


@pytest.fixture
async def setup(alice, bob, monkeypatch):
    agent = FakeAgent(reply=lambda text: ["echo: ", text], delay=0)
    monkeypatch.setattr(turns, "astart_turn", agent)
    make_token = sync_to_async(create_api_token)
    api = Api((await make_token(user=alice, name="t")).secret)
    bob_api = Api((await make_token(user=bob, name="t")).secret)
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    yield api, bob_api, conversation, agent
    await sync_to_async(connections.close_all)()


async def test_regenerate_edit_switch_and_the_lists_that_follow(setup):
    api, _bob, conversation, agent = setup
    base = f"/conversations/{conversation.id}"
    sent = (await api.post(f"{base}/messages", {"content": "hello"})).json()
    question, reply = sent["user_message"], sent["assistant_message"]
    assert reply["parent_id"] == question["id"] and reply["run_id"] == reply["id"]

    again = await api.post(f"/messages/{reply['id']}/regenerate", {})
    assert again.status_code == 201, again.content
    second = again.json()["assistant_message"]
    assert second["sibling_ids"] == [reply["id"], second["id"]]

    edited = await api.post(f"/messages/{question['id']}/edit", {"content": "hi, edited"})
    assert edited.status_code == 201, edited.content
    new_question = edited.json()["user_message"]
    assert new_question["sibling_ids"] == [question["id"], new_question["id"]]
    assert edited.json()["assistant_message"]["content"] == "echo: hi, edited"

    shown = (await api.get(f"{base}/messages")).json()["items"]
    assert [m["content"] for m in shown] == ["hi, edited", "echo: hi, edited"]
    every = (await api.get(f"{base}/messages", branch="all")).json()["items"]
    assert [m["sequence_number"] for m in every] == [1, 2, 3, 4, 5]

    switched = await api.post(f"{base}/switch", {"message_id": question["id"]})
    assert switched.status_code == 200
    assert switched.json()["current_message_id"] == second["id"]  # the newest leaf under it
    shown = (await api.get(f"{base}/messages")).json()["items"]
    assert [m["id"] for m in shown] == [question["id"], second["id"]]
    detail = (await api.get(base)).json()
    assert detail["current_message_id"] == second["id"]
    assert agent.calls == ["hello", "hello", "hi, edited"]


async def test_another_users_message_is_404_for_every_branch_operation(setup):
    api, bob, conversation, _agent = setup
    base = f"/conversations/{conversation.id}"
    reply = (await api.post(f"{base}/messages", {"content": "hello"})).json()["assistant_message"]
    for path, body in (
        (f"/messages/{reply['id']}/regenerate", {}),
        (f"/messages/{reply['id']}/edit", {"content": "x"}),
        (f"/messages/{reply['id']}/continue", {}),
        ("/messages/not-a-uuid/regenerate", {}),
    ):
        response = await bob.post(path, body)
        assert response.status_code == 404, (path, response.content)
    missing = "00000000-0000-0000-0000-000000000000"
    response = await api.post(f"{base}/switch", {"message_id": missing})
    assert response.status_code == 404
    assert await Message.objects.filter(conversation=conversation).acount() == 2


async def test_bad_branch_requests_are_refused_and_change_nothing(setup):
    api, _bob, conversation, _agent = setup
    base = f"/conversations/{conversation.id}"
    sent = (await api.post(f"{base}/messages", {"content": "hello"})).json()
    question, reply = sent["user_message"], sent["assistant_message"]
    cases = [
        (f"/messages/{reply['id']}/edit", {"content": "x"}, 422),  # a reply is not yours to edit
        (f"/messages/{reply['id']}/continue", {}, 422),  # it was not cut off
        (f"/messages/{question['id']}/edit", {"content": ""}, 422),
        (f"/messages/{question['id']}/edit", {"content": "a\x00b"}, 422),
        (f"/messages/{question['id']}/edit", {"content": "x", "colour": 1}, 422),
        (f"/messages/{reply['id']}/regenerate", {"model": "no-such-model"}, 422),
        (f"{base}/switch", {}, 422),
    ]
    for path, body, status in cases:
        response = await api.post(path, body)
        assert response.status_code == status, (path, body, response.content)
        assert "error" in response.json()
    assert await Message.objects.filter(conversation=conversation).acount() == 2


async def test_the_json_export_carries_the_tree_and_import_restores_it(setup, alice):
    api, _bob, conversation, _agent = setup
    base = f"/conversations/{conversation.id}"
    sent = (await api.post(f"{base}/messages", {"content": "hello"})).json()
    await api.post(f"/messages/{sent['assistant_message']['id']}/regenerate", {})
    await api.post(f"/messages/{sent['user_message']['id']}/edit", {"content": "other"})
    exported = await api.client.get(f"/api/v1{base}/export", {"format": "json"}, headers=api.auth)
    raw = b"".join([chunk async for chunk in exported.streaming_content])
    data = json.loads(raw)
    assert [m["parent_id"] is None for m in data["messages"]] == [True, False, False, True, False]
    markdown = await api.client.get(
        f"/api/v1{base}/export", {"format": "markdown"}, headers=api.auth
    )
    text = b"".join([chunk async for chunk in markdown.streaming_content]).decode()
    assert "echo: other" in text and "echo: hello" not in text  # the current branch only

    imported = await api.client.post(
        "/api/v1/conversations/import", raw, content_type="application/json", headers=api.auth
    )
    assert imported.status_code == 201, imported.content
    copy = await Conversation.objects.aget(pk=imported.json()["id"])
    rows = [m async for m in copy.messages.order_by("sequence_number")]
    by_old = dict(zip([m["id"] for m in data["messages"]], rows, strict=True))
    for old in data["messages"]:
        parent = by_old[old["parent_id"]].pk if old["parent_id"] else None
        assert by_old[old["id"]].parent_id == parent
    assert copy.current_message_id == by_old[data["conversation"]["current_message_id"]].pk


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["messages"][1].update(parent_id="nowhere"),
        lambda d: d["messages"][0].update(parent_id=d["messages"][1]["id"]),  # a later one
        lambda d: d["messages"][1].update(id=d["messages"][0]["id"]),
        lambda d: d["conversation"].update(current_message_id="nowhere"),
    ],
)
async def test_an_import_with_a_broken_tree_is_400_and_stores_nothing(setup, change):
    api, _bob, conversation, _agent = setup
    base = f"/conversations/{conversation.id}"
    await api.post(f"{base}/messages", {"content": "hello"})
    exported = await api.client.get(f"/api/v1{base}/export", {"format": "json"}, headers=api.auth)
    data = json.loads(b"".join([chunk async for chunk in exported.streaming_content]))
    change(data)
    response = await api.client.post(
        "/api/v1/conversations/import",
        json.dumps(data),
        content_type="application/json",
        headers=api.auth,
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid_import"
    assert await Conversation.objects.acount() == 1
