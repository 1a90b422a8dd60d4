"""The memory store's statements run in the row-level security scope: a read in one
statement (the scope travels with it), a write in one transaction."""

from __future__ import annotations

import pytest
from django.db import ProgrammingError, connection
from django.test.utils import CaptureQueriesContext

from core import rls
from memories import services as memories

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_recall_is_one_statement_that_carries_the_users_scope(alice, bob, require_postgres):
    with rls.maintenance():
        memories.add_memory(user_id=alice.pk, text="My locker number is 4412.")
        memories.add_memory(user_id=bob.pk, text="My locker number is 1234.")
    with rls.as_user(alice.pk), CaptureQueriesContext(connection) as sent:
        found = memories.list_memories(user_id=alice.pk)
        assert not connection.in_atomic_block
    assert [m["text"] for m in found] == ["My locker number is 4412."]
    [statement] = sent.captured_queries
    assert "set_config('app.user_id'" in statement["sql"] and "FROM store" in statement["sql"]


def test_another_users_memories_stay_hidden_even_when_asked_for_by_name(
    alice, bob, require_postgres
):
    with rls.maintenance():
        memories.add_memory(user_id=bob.pk, text="My card ends in 4821.")
    with rls.as_user(alice.pk):
        assert memories.list_memories(user_id=bob.pk) == []
    with rls.as_user(bob.pk):
        assert [m["text"] for m in memories.list_memories(user_id=bob.pk)] == [
            "My card ends in 4821."
        ]


def test_a_write_outside_the_users_scope_changes_nothing(alice, bob, require_postgres):
    with rls.as_user(alice.pk), pytest.raises(ProgrammingError, match="row-level security"):
        memories.add_memory(user_id=bob.pk, text="Planted by someone else.")
    with rls.maintenance():
        assert memories.list_memories(user_id=bob.pk) == []


def test_a_users_memories_are_not_listed_for_a_user_whose_id_starts_the_same(
    django_user_model,
):
    # Seen by every role (no row-level security narrowing): the namespace alone must part
    # user 7's memories from user 70's.
    seven = django_user_model.objects.create_user(id=7007, username="seven", password="x" * 12)
    seventy = django_user_model.objects.create_user(id=70070, username="seventy", password="x" * 12)
    with rls.maintenance():
        memories.add_memory(user_id=seven.pk, text="I am seven.")
        memories.add_memory(user_id=seventy.pk, text="I am seventy.")
        assert [m["text"] for m in memories.list_memories(user_id=seven.pk)] == ["I am seven."]
