"""Pinned and temporary conversations (SPEC "The shell and the landing"): the API, lists,
search, shares, exports, the agent's search of other conversations, the day-old purge."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from conversations import search, selectors, services
from conversations.models import Conversation
from conversations.temporary import purge_expired_temporary
from tests.support import seed

from .conftest import make_conversation

pytestmark = pytest.mark.django_db


def test_pinning_shows_in_the_conversation_json_and_unpinning_clears_it(api, alice):
    conversation = make_conversation(alice, title="Plans")
    assert api.get(f"/conversations/{conversation.id}").json()["pinned"] is False
    pinned = api.patch(f"/conversations/{conversation.id}", {"pinned": True})
    assert pinned.status_code == 200 and pinned.json()["pinned"] is True
    assert api.get(f"/conversations/{conversation.id}").json()["pinned"] is True
    listed = api.get("/conversations").json()["items"]
    assert [c["pinned"] for c in listed] == [True]
    unpinned = api.patch(f"/conversations/{conversation.id}", {"pinned": False})
    assert unpinned.json()["pinned"] is False


def test_pinning_keeps_the_conversations_place_among_the_recent_ones(api, alice):
    conversation = make_conversation(alice, title="Old one")
    before = Conversation.objects.get(pk=conversation.pk).updated_at
    api.patch(f"/conversations/{conversation.id}", {"pinned": True})
    assert Conversation.objects.get(pk=conversation.pk).updated_at == before


def test_pinned_must_be_a_boolean(api, alice):
    conversation = make_conversation(alice)
    for value in ("yes", 1, [True]):
        response = api.patch(f"/conversations/{conversation.id}", {"pinned": value})
        assert response.status_code == 422
    assert Conversation.objects.get(pk=conversation.pk).pinned is False


def test_the_sidebar_lists_pinned_conversations_first_then_the_newest(alice):
    old = make_conversation(alice, title="Old, pinned")
    middle = make_conversation(alice, title="Middle")
    new = make_conversation(alice, title="New")
    services.update_conversation(conversation=old, pinned=True)
    rows = selectors.list_recent_conversations(user=alice)
    assert [c.title for c in rows] == [old.title, new.title, middle.title]


def test_another_users_conversation_cannot_be_pinned(bob_api, alice):
    conversation = make_conversation(alice)
    response = bob_api.patch(f"/conversations/{conversation.id}", {"pinned": True})
    assert response.status_code == 404
    assert Conversation.objects.get(pk=conversation.pk).pinned is False


def _export_json(api, conversation) -> dict:
    return json.loads(b"".join(api.get(f"/conversations/{conversation.id}/export", format="json")))


def test_pinned_survives_export_and_import(api, alice):
    conversation = make_conversation(alice, title="Keep me on top", contents=["a", "b"])
    api.patch(f"/conversations/{conversation.id}", {"pinned": True})
    exported = _export_json(api, conversation)
    assert exported["conversation"]["pinned"] is True
    imported = api.post("/conversations/import", exported)
    assert imported.status_code == 201
    assert imported.json()["pinned"] is True
    assert Conversation.objects.get(pk=imported.json()["id"]).pinned is True


def test_an_export_without_pinned_imports_unpinned_and_a_bad_one_is_refused(api, alice):
    conversation = make_conversation(alice, title="Plain", contents=["a", "b"])
    exported = _export_json(api, conversation)
    del exported["conversation"]["pinned"]
    assert api.post("/conversations/import", exported).json()["pinned"] is False
    count = Conversation.objects.count()
    exported["conversation"]["pinned"] = 1
    wrong = api.post("/conversations/import", exported)
    assert wrong.status_code == 400
    assert "pinned" in wrong.json()["error"]["message"]
    assert Conversation.objects.count() == count


def test_temporary_is_set_at_creation_and_cannot_be_changed(api):
    created = api.post("/conversations", {"title": "Off the record", "temporary": True})
    assert created.status_code == 201 and created.json()["temporary"] is True
    conversation_id = created.json()["id"]
    refused = api.patch(f"/conversations/{conversation_id}", {"temporary": False})
    assert refused.status_code == 422
    assert Conversation.objects.get(pk=conversation_id).temporary is True
    kept = api.post("/conversations", {"title": "Normal"}).json()
    assert kept["temporary"] is False
    assert api.patch(f"/conversations/{kept['id']}", {"temporary": True}).status_code == 422
    assert api.post("/conversations", {"temporary": "yes"}).status_code == 422


def _temporary(user, **fields):
    return services.create_conversation(user=user, temporary=True, **fields)


def test_a_temporary_conversation_is_never_listed(api, alice, alice_client):
    kept = make_conversation(alice, title="Kept budget", contents=["budget plan", "ok"])
    hidden = _temporary(alice, title="Secret budget")
    seed.add_message(conversation_id=hidden.id, role="user", content="budget secret")
    hidden.refresh_from_db()
    services.update_conversation(conversation=hidden, pinned=True)

    assert [c["id"] for c in api.get("/conversations").json()["items"]] == [str(kept.id)]
    assert [c["id"] for c in api.get("/conversations", q="budget").json()["items"]] == [
        str(kept.id)
    ]
    assert [c.id for c in selectors.list_recent_conversations(user=alice)] == [kept.id]
    page = alice_client.get("/conversations/", {"q": "budget"})
    assert page.status_code == 200
    html = page.content.decode()
    assert "Kept budget" in html and "Secret budget" not in html and "budget secret" not in html
    # Still the owner's to open.
    assert api.get(f"/conversations/{hidden.id}").json()["temporary"] is True


def test_a_temporary_conversations_messages_are_never_found_by_search(api, alice):
    kept = make_conversation(alice, contents=["walrus in the kept one", "ok"])
    hidden = _temporary(alice)
    seed.add_message(conversation_id=hidden.id, role="user", content="walrus in the hidden one")
    hits = api.get("/search/messages", q="walrus").json()["items"]
    assert [h["conversation_id"] for h in hits] == [str(kept.id)]


def test_the_agent_never_finds_a_temporary_conversation_from_another_one(alice):
    hidden = _temporary(alice)
    seed.add_message(conversation_id=hidden.id, role="user", content="my locker code is walrus")
    other = make_conversation(alice, contents=["a walrus fact", "ok"])
    asking = make_conversation(alice)
    found = search.search_other_conversations(
        user_id=alice.pk, query="walrus", exclude_conversation_id=asking.id
    )
    assert [f["conversation_id"] for f in found] == [str(other.id)]


def test_a_temporary_conversation_cannot_be_shared(api, alice):
    hidden = _temporary(alice)
    seed.add_message(conversation_id=hidden.id, role="user", content="hello")
    response = api.post(f"/conversations/{hidden.id}/shares")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "temporary_conversation"
    assert api.get("/shares").json()["items"] == []


def test_a_fork_of_a_temporary_conversation_stays_temporary(api, alice, fake_agent):
    hidden = _temporary(alice)
    message = seed.add_message(conversation_id=hidden.id, role="user", content="hello")
    fork = api.post(f"/conversations/{hidden.id}/fork", {"from_message_id": str(message.id)})
    assert fork.status_code == 201 and fork.json()["temporary"] is True
    assert api.get("/conversations").json()["items"] == []


def test_another_users_temporary_conversation_is_not_found(bob_api, alice):
    hidden = _temporary(alice)
    for call in (
        bob_api.get(f"/conversations/{hidden.id}"),
        bob_api.patch(f"/conversations/{hidden.id}", {"pinned": True}),
        bob_api.post(f"/conversations/{hidden.id}/shares"),
        bob_api.delete(f"/conversations/{hidden.id}"),
    ):
        assert call.status_code == 404
    assert Conversation.objects.filter(pk=hidden.pk).exists()


def test_the_purge_deletes_temporary_conversations_a_day_after_their_last_message(
    alice, fake_agent, django_capture_on_commit_callbacks
):
    now = timezone.now()
    stale = _temporary(alice, title="stale")
    seed.add_message(
        conversation_id=stale.id, role="user", content="x", created_at=now - timedelta(hours=25)
    )
    fresh = _temporary(alice, title="fresh")
    seed.add_message(
        conversation_id=fresh.id, role="user", content="x", created_at=now - timedelta(hours=23)
    )
    empty_old = _temporary(alice, title="empty and old")
    Conversation.objects.filter(pk=empty_old.pk).update(created_at=now - timedelta(hours=25))
    kept = make_conversation(alice, title="kept")
    Conversation.objects.filter(pk=kept.pk).update(
        created_at=now - timedelta(days=30), last_message_at=now - timedelta(days=30)
    )

    assert purge_expired_temporary(dry_run=True) == 2
    with django_capture_on_commit_callbacks(execute=True):
        call_command("purge_archived")
    left = set(Conversation.objects.values_list("title", flat=True))
    assert left == {"fresh", "kept"}
    # Through the normal delete: the agent threads go too.
    assert sorted(fake_agent["delete"]) == sorted([str(stale.id), str(empty_old.id)])
    assert purge_expired_temporary(now=now + timedelta(hours=24)) == 1
    assert set(Conversation.objects.values_list("title", flat=True)) == {"kept"}
