from __future__ import annotations

import pytest
from django.test import Client

from conversations import services
from conversations.models import Conversation
from tests.support import seed

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(make_user):
    staff = make_user("moderator", is_staff=True, is_superuser=True)
    c = Client()
    c.force_login(staff)
    return c


def test_staff_see_every_users_conversations(staff_client, alice, bob):
    services.create_conversation(user=alice, title="Alice's plans")
    services.create_conversation(user=bob, title="Bob's notes")
    response = staff_client.get("/admin/conversations/conversation/")
    assert response.status_code == 200
    assert "Alice&#x27;s plans" in response.text
    assert "Bob&#x27;s notes" in response.text


def test_admin_search_finds_message_content(staff_client, alice):
    conversation = services.create_conversation(user=alice, title="Travel")
    seed.add_message(conversation_id=conversation.id, role="user", content="Lisbon in March")
    services.create_conversation(user=alice, title="Other")
    response = staff_client.get("/admin/conversations/conversation/", {"q": "Lisbon"})
    assert "Travel" in response.text
    assert "Other" not in response.text


def test_admin_archive_and_flag_actions(staff_client, alice):
    conversation = services.create_conversation(user=alice, title="Flag me")
    for action in ("archive", "flag"):
        staff_client.post(
            "/admin/conversations/conversation/",
            {"action": action, "_selected_action": [str(conversation.id)]},
        )
    conversation.refresh_from_db()
    assert conversation.status == "archived"
    assert conversation.is_flagged


def test_conversation_page_in_admin_lists_messages_in_order(staff_client, alice):
    conversation = services.create_conversation(user=alice, title="Ordered")
    for text in ("first words", "second words", "third words"):
        seed.add_message(conversation_id=conversation.id, role="user", content=text)
    response = staff_client.get(f"/admin/conversations/conversation/{conversation.id}/change/")
    text = response.text.split('id="messages-group"', 1)[1]  # the inline, not the fields
    assert text.index("first words") < text.index("second words") < text.index("third words")


def test_a_conversation_page_does_not_offer_every_message_of_the_site(staff_client, alice, bob):
    conversation = services.create_conversation(user=alice, title="Mine")
    seed.add_message(conversation_id=conversation.id, role="user", content="my words")
    elsewhere = services.create_conversation(user=bob, title="Bob's")
    seed.add_message(conversation_id=elsewhere.id, role="user", content="bob's private words")
    response = staff_client.get(f"/admin/conversations/conversation/{conversation.id}/change/")
    assert response.status_code == 200
    # The branch and the summary's reach are shown, not edited: a choice of every message
    # stored would be the whole site's messages in one page.
    assert "bob&#x27;s private words" not in response.text
    assert 'name="current_message"' not in response.text
    assert 'name="summary_through"' not in response.text


def test_non_staff_cannot_enter_admin(alice_client, alice):
    services.create_conversation(user=alice, title="x")
    response = alice_client.get("/admin/conversations/conversation/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_admin_delete_removes_conversation(staff_client, alice):
    conversation = services.create_conversation(user=alice, title="Gone")
    staff_client.post(
        "/admin/conversations/conversation/",
        {"action": "delete_selected", "_selected_action": [str(conversation.id)], "post": "yes"},
    )
    assert not Conversation.objects.filter(pk=conversation.pk).exists()
