from __future__ import annotations

import pytest

from conversations import services
from conversations.models import Conversation
from tests.support import seed

pytestmark = pytest.mark.django_db


def test_pages_require_login(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_owner_sees_their_conversation_page(alice_client, alice):
    conversation = services.create_conversation(user=alice, title="Budget review")
    seed.add_message(conversation_id=conversation.id, role="user", content="회의가 언제야?")
    response = alice_client.get(f"/conversations/{conversation.id}/")
    assert response.status_code == 200
    assert "Budget review" in response.text
    assert "회의가 언제야?" in response.text


def test_other_users_conversation_page_is_404(bob_client, alice):
    conversation = services.create_conversation(user=alice, title="Private")
    response = bob_client.get(f"/conversations/{conversation.id}/")
    assert response.status_code == 404
    assert "Private" not in response.text


def test_malformed_uuid_in_url_is_404(alice_client):
    assert alice_client.get("/conversations/not-a-uuid/").status_code == 404


def test_list_shows_only_own_conversations(alice_client, alice, bob):
    services.create_conversation(user=alice, title="Mine")
    services.create_conversation(user=bob, title="Theirs")
    response = alice_client.get("/")
    assert "Mine" in response.text
    assert "Theirs" not in response.text


def test_creating_with_over_long_title_is_400_and_creates_nothing(alice_client):
    response = alice_client.post("/conversations/new/", {"title": "x" * 201})
    assert response.status_code == 400
    assert not Conversation.objects.exists()


def test_signup_login_logout(client, django_user_model):
    response = client.post(
        "/accounts/signup/",
        {
            "username": "carol",
            "password1": "a-long-pass-phrase-9",
            "password2": "a-long-pass-phrase-9",
        },
    )
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    client.post("/accounts/logout/")
    assert client.get("/").status_code == 302
    assert client.login(username="carol", password="a-long-pass-phrase-9")
    assert django_user_model.objects.filter(username="carol").exists()
