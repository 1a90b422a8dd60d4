"""The audit log's writer and the database's refusal to change what it wrote."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.utils import DatabaseError

from audit.models import AuditEntry
from audit.services import record
from conversations import services
from core import rls
from tests.conftest import require_service, uses_postgres

pytestmark = pytest.mark.django_db


@pytest.fixture
def postgres():
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")


def test_an_entry_names_who_did_what_to_which_object(make_user, alice):
    staff = make_user("moderator", is_staff=True)
    conversation = services.create_conversation(user=alice, title="Plans")
    with rls.maintenance():
        entry = record(
            actor=staff,
            action=AuditEntry.Action.CONVERSATION_DELETED,
            target=conversation,
            detail={"owner": alice.username},
        )
    stored = AuditEntry.objects.get(pk=entry.pk)
    assert (stored.actor_id, stored.actor_name, stored.action) == (
        staff.pk,
        "moderator",
        "conversation.deleted",
    )
    assert (stored.target_type, stored.target_id) == (
        "conversations.conversation",
        str(conversation.pk),
    )
    assert stored.target_repr == "Plans" and stored.detail == {"owner": "alice"}
    assert stored.created_at is not None


def test_an_entry_outlives_its_actor(make_user):
    staff = make_user("gone", is_staff=True)
    entry = record(actor=staff, action=AuditEntry.Action.BUDGET_CHANGED, target_repr="x" * 500)
    staff.delete()
    stored = AuditEntry.objects.get(pk=entry.pk)
    assert stored.actor_name == "gone" and len(stored.target_repr) == 200


def test_an_unknown_action_is_refused_and_writes_nothing(alice):
    with pytest.raises(ValueError):
        record(actor=alice, action="message.edited")
    assert not AuditEntry.objects.exists()


def test_a_staff_member_in_their_own_scope_writes_entries_naming_themselves(postgres, make_user):
    staff = make_user("moderator", is_staff=True)
    with rls.as_user(staff.pk), transaction.atomic():
        record(actor=staff, action=AuditEntry.Action.PRESET_PUBLISHED, target_repr="Tutor")
        mine = list(AuditEntry.objects.values_list("actor_name", flat=True))
    assert mine == ["moderator"]


def test_a_sign_in_with_nobody_in_scope_still_records_the_link(postgres, alice):
    with rls.using(rls.NOBODY), transaction.atomic():
        record(actor=alice, action=AuditEntry.Action.SSO_LINKED, target=alice)
    assert AuditEntry.objects.get().target_type == "auth.user"


def test_the_system_acting_records_with_no_actor(postgres):
    with rls.using(rls.NOBODY):
        record(actor=None, action=AuditEntry.Action.BUDGET_CHANGED, detail={"tokens": 5})
    entry = AuditEntry.objects.get()
    assert entry.actor_id is None and entry.actor_name == ""


def test_an_entry_rolls_back_with_the_action_that_failed(alice):
    with pytest.raises(RuntimeError), transaction.atomic():
        record(actor=alice, action=AuditEntry.Action.SSO_UNLINKED)
        raise RuntimeError("the unlink failed")
    assert not AuditEntry.objects.exists()


def test_users_do_not_see_each_others_entries(postgres, alice, bob):
    record(actor=alice, action=AuditEntry.Action.SSO_LINKED)
    with rls.as_user(bob.pk):
        assert not AuditEntry.objects.exists()
    with rls.as_user(bob.pk), pytest.raises(DatabaseError), transaction.atomic():
        AuditEntry.objects.create(actor_id=alice.pk, action=AuditEntry.Action.SSO_LINKED)


@pytest.mark.parametrize("scope", ["app", "maintenance"])
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_auditentry SET actor_name = 'someone else'",
        "DELETE FROM audit_auditentry",
        "TRUNCATE audit_auditentry",
    ],
)
def test_the_database_refuses_to_change_or_remove_an_entry(postgres, make_user, scope, statement):
    staff = make_user("moderator", is_staff=True)
    record(actor=staff, action=AuditEntry.Action.REPORT_DISMISSED, target_repr="kept")

    def chosen():
        return rls.as_user(staff.pk) if scope == "app" else rls.maintenance()

    refused = pytest.raises(DatabaseError, match="permission denied")
    with chosen(), refused, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement)
    refused = pytest.raises(DatabaseError, match="permission denied")
    with chosen(), refused, transaction.atomic():
        AuditEntry.objects.filter(actor_id=staff.pk).update(target_repr="edited")
    assert AuditEntry.objects.get().actor_name == "moderator"
    assert AuditEntry.objects.get().target_repr == "kept"
