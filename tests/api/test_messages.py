from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.contrib.admin.sites import site
from django.db import connections
from django.test import AsyncClient

from accounts.tokens import create_api_token
from agent.tokens import estimate_tokens
from conversations.models import Conversation, Message, MessageFeedback
from conversations.replies import turns
from tests.support import seed
from tests.support.fake_turn import FakeAgent

from .conftest import make_conversation

pytestmark = pytest.mark.django_db


def test_messages_list_oldest_first_with_after_before_and_pages(api, alice):
    conversation = make_conversation(alice, contents=[f"m{i}" for i in range(1, 8)])
    url = f"/conversations/{conversation.id}/messages"
    body = api.get(url, limit=3).json()
    assert [m["sequence_number"] for m in body["items"]] == [1, 2, 3]
    assert body["items"][0]["conversation_id"] == str(conversation.id)
    body = api.get(url, limit=3, cursor=body["next_cursor"]).json()
    assert [m["sequence_number"] for m in body["items"]] == [4, 5, 6]
    assert [m["sequence_number"] for m in api.get(url, after=5).json()["items"]] == [6, 7]
    before = api.get(url, before=6, limit=2).json()
    assert [m["sequence_number"] for m in before["items"]] == [4, 5]
    assert api.get(url, limit=201).status_code == 422


def test_feedback_is_one_per_user_and_changeable(api, alice):
    conversation = make_conversation(alice, contents=["q", "a"])
    reply = conversation.messages.get(sequence_number=2)
    response = api.post(f"/messages/{reply.id}/feedback", {"rating": "up"})
    assert response.status_code == 200
    assert response.json()["rating"] == "up"
    response = api.post(
        f"/messages/{reply.id}/feedback",
        {"rating": "down", "comment": "wrong", "reasons": ["too_long", "incorrect"]},
    )
    assert response.json() | {"updated_at": None} == {
        "message_id": str(reply.id),
        "rating": "down",
        "comment": "wrong",
        "reasons": ["incorrect", "too_long"],  # in the list's order
        "updated_at": None,
    }
    assert MessageFeedback.objects.get().rating == "down"
    assert api.post(f"/messages/{reply.id}/feedback", {"rating": "meh"}).status_code == 422
    for bad in (["rude"], "incorrect", ["incorrect"] * 7):
        refused = api.post(f"/messages/{reply.id}/feedback", {"rating": "up", "reasons": bad})
        assert refused.status_code == 422, bad
    assert MessageFeedback.objects.get().reasons == ["incorrect", "too_long"]  # unchanged


def test_reported_message_is_flagged_for_the_admin(api, alice, admin_client):
    conversation = make_conversation(alice, contents=["q", "bad answer"])
    reply = conversation.messages.get(sequence_number=2)
    response = api.post(f"/messages/{reply.id}/report", {"reason": "rude"})
    assert response.status_code == 200
    reply.refresh_from_db()
    assert reply.is_flagged and reply.flag_reason == "rude"
    page = admin_client.get("/admin/conversations/message/?is_flagged__exact=1")
    assert page.status_code == 200
    assert "bad answer" in page.content.decode()
    assert Message in site._registry


def test_delete_message_takes_its_subtree_leaves_a_gap_and_keeps_counters_true(
    api, alice, fake_agent
):
    conversation = make_conversation(alice, contents=["u1", "a2", "u3", "a4", "u5", "a6"])
    fourth = conversation.messages.get(sequence_number=4)
    response = api.delete(f"/messages/{fourth.id}")
    assert response.status_code == 204
    conversation.refresh_from_db()
    rows = list(conversation.messages.order_by("sequence_number"))
    # Everything under it went with it; nothing is renumbered, so a cursor a client
    # holds (`after=4`) keeps its meaning.
    assert [(m.sequence_number, m.content) for m in rows] == [(1, "u1"), (2, "a2"), (3, "u3")]
    assert conversation.message_count == 3
    assert conversation.total_tokens_used == sum(m.tokens_used for m in rows)
    assert conversation.last_message_at == rows[-1].created_at
    # The current branch moved to the nearest remaining leaf.
    assert conversation.current_message_id == rows[-1].id
    api.delete(f"/messages/{rows[-1].id}")
    conversation.refresh_from_db()
    assert conversation.message_count == 2
    assert conversation.last_message_at == rows[-2].created_at
    # A number once handed out is never handed out again, not even the deleted last one.
    added = seed.add_message(conversation_id=conversation.id, role="user", content="n")
    assert added.sequence_number == 7
    assert added.parent_id == rows[-2].id


def test_deleting_a_message_keeps_its_siblings(api, alice, fake_agent):
    conversation = make_conversation(alice, contents=["u1", "a2"])
    question, first = list(conversation.messages.order_by("sequence_number"))
    second = seed.add_message(
        conversation_id=conversation.id, role="assistant", content="a2 again", parent=question
    )
    assert api.delete(f"/messages/{second.id}").status_code == 204
    conversation.refresh_from_db()
    assert list(conversation.messages.values_list("content", flat=True)) == ["u1", "a2"]
    assert conversation.current_message_id == first.id


def test_unknown_message_is_404(api, fake_agent):
    missing = "00000000-0000-0000-0000-000000000000"
    assert api.delete(f"/messages/{missing}").status_code == 404
    assert api.delete("/messages/not-a-uuid").status_code == 404
    assert api.post(f"/messages/{missing}/feedback", {"rating": "up"}).status_code == 404


# --- sending: the same path as the websocket -------------------------------------------
@pytest.fixture
def echo_agent(monkeypatch):
    """An agent turn that answers "echo: <text>" (the orchestrator stores it)."""
    agent = FakeAgent(reply=lambda text: ["echo: ", text], delay=0)
    monkeypatch.setattr(turns, "astart_turn", agent)
    return agent


@pytest.mark.django_db(transaction=True)
async def test_posting_a_message_runs_one_turn_and_answers_both_messages(alice, echo_agent):
    conversation = await sync_to_async(make_conversation)(alice)
    token = (await sync_to_async(create_api_token)(user=alice, name="t")).secret
    client = AsyncClient()
    auth = {"Authorization": f"Bearer {token}"}
    url = f"/api/v1/conversations/{conversation.id}/messages"
    try:
        response = await client.post(
            url,
            {"content": "hello", "client_id": "c1"},
            content_type="application/json",
            headers=auth,
        )
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["user_message"]["content"] == "hello"
        assert body["user_message"]["sequence_number"] == 1
        assert body["assistant_message"]["content"] == "echo: hello"
        assert body["assistant_message"]["sequence_number"] == 2
        again = await client.post(
            url,
            {"content": "hello", "client_id": "c1"},
            content_type="application/json",
            headers=auth,
        )
        assert again.status_code == 200
        assert again.json()["user_message"]["id"] == body["user_message"]["id"]
        refreshed = await Conversation.objects.aget(pk=conversation.pk)
        # The reply counts its output tokens; the user's "hello" carries its own estimate.
        assert refreshed.message_count == 2
        reply_tokens = body["assistant_message"]["tokens_used"]
        assert refreshed.total_tokens_used == reply_tokens + estimate_tokens("hello")
        empty = await client.post(
            url, {"content": ""}, content_type="application/json", headers=auth
        )
        assert empty.status_code == 422
    finally:
        await sync_to_async(connections.close_all)()
