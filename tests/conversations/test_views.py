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
    response = alice_client.get("/conversations/")
    assert "Mine" in response.text
    assert "Theirs" not in response.text


def test_creating_with_over_long_title_is_400_and_creates_nothing(alice_client):
    response = alice_client.post("/conversations/new/", {"title": "x" * 201, "content": "hi"})
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


def test_the_page_shows_the_current_branch_and_a_hit_elsewhere_opens_its_branch(
    alice_client, alice, bob_client
):
    conversation = services.create_conversation(user=alice, title="Branches")
    question = seed.add_message(conversation_id=conversation.id, role="user", content="Q")
    old = seed.add_message(conversation_id=conversation.id, role="assistant", content="첫 답변")
    new = seed.add_message(
        conversation_id=conversation.id, role="assistant", content="두 번째 답변", parent=question
    )
    page = alice_client.get(f"/conversations/{conversation.id}/").text
    assert "두 번째 답변" in page and "첫 답변" not in page
    assert "2/2" in page
    # Bob's request with Alice's message id changes nothing and shows him nothing.
    assert bob_client.get(f"/conversations/{conversation.id}/?m={old.id}").status_code == 404
    page = alice_client.get(f"/conversations/{conversation.id}/?at=2&m={old.id}").text
    assert "첫 답변" in page and "두 번째 답변" not in page and "1/2" in page
    conversation.refresh_from_db()
    assert conversation.current_message_id == old.id
    assert new.parent_id == old.parent_id
    # A malformed or foreign id just shows the conversation as it is.
    assert alice_client.get(f"/conversations/{conversation.id}/?m=nope").status_code == 200


def test_a_reply_whose_counts_are_estimates_says_so(alice_client, alice):
    conversation = services.create_conversation(user=alice, title="Usage")
    seed.add_message(conversation_id=conversation.id, role="user", content="Q")
    for estimated in (True, False):
        seed.add_message(
            conversation_id=conversation.id,
            role="assistant",
            content=f"estimated={estimated}",
            tokens_used=12,
            metadata={"context": {"usage_estimated": estimated, "message_ids": []}},
        )
    page = alice_client.get(f"/conversations/{conversation.id}/").text
    assert page.count('class="estimated"') == 1  # only the reply whose counts are estimates
