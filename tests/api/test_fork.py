from __future__ import annotations

import pytest

from conversations.models import Conversation

from .conftest import make_conversation

pytestmark = pytest.mark.django_db(transaction=True)

SIX = ["I live in Busan", "Noted", "My cat is Nabi", "Nice name", "My car is red", "Got it"]


def test_fork_at_message_three_of_six(api, alice, fake_agent):
    source = make_conversation(alice, title="Facts", contents=SIX)
    third = source.messages.get(sequence_number=3)
    response = api.post(f"/conversations/{source.id}/fork", {"from_message_id": str(third.id)})
    assert response.status_code == 201
    body = response.json()
    assert body["title"] == "Facts (fork)"
    assert body["parent_conversation_id"] == str(source.id)
    assert body["forked_from_message_id"] == str(third.id)
    fork = Conversation.objects.get(pk=body["id"])
    copies = list(fork.messages.order_by("sequence_number"))
    originals = list(source.messages.order_by("sequence_number")[:3])
    assert [m.sequence_number for m in copies] == [1, 2, 3]
    for copy, original in zip(copies, originals, strict=True):
        assert copy.id != original.id
        assert (copy.role, copy.content, copy.parts, copy.metadata, copy.created_at) == (
            original.role,
            original.content,
            original.parts,
            original.metadata,
            original.created_at,
        )
    assert body["message_count"] == 3
    assert body["total_tokens_used"] == sum(m.tokens_used for m in originals)
    assert fork.last_message_at == originals[-1].created_at
    assert fork.created_by == alice
    # Linked both ways.
    parent = api.get(f"/conversations/{source.id}").json()
    assert parent["forks"] == [{"id": str(fork.id), "title": "Facts (fork)"}]
    # The agent's memory was copied as of the fork point.
    assert fake_agent["copy"] == [(str(source.id), str(fork.id), str(third.id))]
    # The source is untouched.
    source.refresh_from_db()
    assert source.message_count == 6


def test_fork_takes_a_given_title(api, alice, fake_agent):
    source = make_conversation(alice, contents=SIX[:2])
    first = source.messages.first()
    body = api.post(
        f"/conversations/{source.id}/fork", {"from_message_id": str(first.id), "title": "Other"}
    ).json()
    assert body["title"] == "Other"
    assert body["message_count"] == 1


def test_fork_of_a_fork_works(api, alice, fake_agent):
    source = make_conversation(alice, title="Root", contents=SIX)
    fifth = source.messages.get(sequence_number=5)
    fork = api.post(f"/conversations/{source.id}/fork", {"from_message_id": str(fifth.id)}).json()
    fork_second = Conversation.objects.get(pk=fork["id"]).messages.get(sequence_number=2)
    again = api.post(
        f"/conversations/{fork['id']}/fork", {"from_message_id": str(fork_second.id)}
    ).json()
    assert again["title"] == "Root (fork) (fork)"
    assert again["parent_conversation_id"] == fork["id"]
    assert again["message_count"] == 2
    assert api.get(f"/conversations/{fork['id']}").json()["forks"][0]["id"] == again["id"]


def test_fork_from_a_message_of_another_conversation_is_not_found(api, alice, fake_agent):
    one = make_conversation(alice, contents=["a"])
    other = make_conversation(alice, contents=["b"])
    message = other.messages.first()
    response = api.post(f"/conversations/{one.id}/fork", {"from_message_id": str(message.id)})
    assert response.status_code == 404
    assert Conversation.objects.count() == 2


def test_fork_survives_an_agent_that_cannot_copy_its_memory(api, alice, monkeypatch):
    from conversations.replies import threads

    async def broken(**kwargs):
        raise RuntimeError("checkpointer down")

    monkeypatch.setattr(threads, "acopy_agent_thread", broken)
    source = make_conversation(alice, contents=SIX[:3])
    third = source.messages.get(sequence_number=3)
    response = api.post(f"/conversations/{source.id}/fork", {"from_message_id": str(third.id)})
    assert response.status_code == 201
    assert response.json()["message_count"] == 3
