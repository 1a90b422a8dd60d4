"""Staff deleting a user in the admin is audited, with what went with them (issue 55)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from audit.models import AuditEntry
from conversations import services
from conversations.models import Conversation, Message
from memories.services import add_memory, list_memories
from tests.support import seed

pytestmark = pytest.mark.django_db(transaction=True)
User = get_user_model()


@pytest.fixture
def staff_client(make_user):
    root = make_user("root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root)
    return client


def with_history(user, title: str) -> Conversation:
    conversation = services.create_conversation(user=user, title=title)
    for role, text in (
        (Message.Role.USER, "My locker is 4412."),
        (Message.Role.ASSISTANT, "Noted."),
    ):
        seed.add_message(conversation_id=conversation.id, role=role, content=text)
    return conversation


def test_deleting_a_user_in_the_admin_writes_one_entry_naming_what_went(staff_client, alice, bob):
    with_history(alice, "One")
    with_history(alice, "Two")
    kept = with_history(bob, "Bob's")
    add_memory(user_id=alice.pk, text="Alice's locker is 4412.")
    answer = staff_client.post(f"/admin/auth/user/{alice.pk}/delete/", {"post": "yes"})
    assert answer.status_code == 302
    assert not User.objects.filter(pk=alice.pk).exists()
    assert not Conversation.objects.filter(created_by_id=alice.pk).exists()
    assert list_memories(user_id=alice.pk) == []  # the store's rows went too
    [entry] = AuditEntry.objects.filter(action=AuditEntry.Action.USER_DELETED)
    assert entry.actor_name == "root" and entry.target_id == str(alice.pk)
    assert entry.detail == {
        "username": "alice",
        "email": "",
        "was_staff": False,
        "conversations": 2,
        "messages": 4,
        "documents": 0,
        "memories": 1,
    }
    assert Conversation.objects.filter(pk=kept.pk).exists()  # nobody else's


def test_deleting_users_in_bulk_writes_one_entry_each(staff_client, alice, bob):
    with_history(alice, "One")
    answer = staff_client.post(
        "/admin/auth/user/",
        {"action": "delete_selected", "_selected_action": [alice.pk, bob.pk], "post": "yes"},
    )
    assert answer.status_code == 302
    entries = AuditEntry.objects.filter(action=AuditEntry.Action.USER_DELETED)
    assert sorted(e.detail["username"] for e in entries) == ["alice", "bob"]
    assert not User.objects.filter(pk__in=[alice.pk, bob.pk]).exists()
