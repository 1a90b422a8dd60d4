from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from conversations.bulk import purge_archived_conversations
from conversations.models import Conversation

from .conftest import make_conversation

pytestmark = pytest.mark.django_db


def test_bulk_archive_and_delete(api, alice, fake_agent):
    a, b, c = (make_conversation(alice, title=t) for t in "abc")
    response = api.post("/conversations/bulk", {"action": "archive", "ids": [str(a.id), str(b.id)]})
    assert response.json() == {"action": "archive", "count": 2}
    assert set(Conversation.objects.filter(status="archived").values_list("title", flat=True)) == {
        "a",
        "b",
    }
    response = api.post("/conversations/bulk", {"action": "delete", "ids": [str(a.id), str(c.id)]})
    assert response.json() == {"action": "delete", "count": 2}
    assert list(Conversation.objects.values_list("title", flat=True)) == ["b"]


def test_bulk_is_all_or_nothing_on_ownership(api, alice, bob, fake_agent):
    mine = make_conversation(alice, title="mine")
    theirs = make_conversation(bob, title="theirs")
    for action in ["archive", "delete", "export"]:
        response = api.post(
            "/conversations/bulk", {"action": action, "ids": [str(mine.id), str(theirs.id)]}
        )
        assert response.status_code == 404
    mine.refresh_from_db()
    assert mine.status == "active"
    assert Conversation.objects.count() == 2
    assert api.post("/conversations/bulk", {"action": "archive", "ids": []}).status_code == 422
    assert (
        api.post("/conversations/bulk", {"action": "zap", "ids": [str(mine.id)]}).status_code == 422
    )


def test_retention_purges_only_long_archived_conversations(alice, settings, fake_agent):
    settings.CHAT_RETENTION_ARCHIVED_DAYS = 30
    now = timezone.now()
    old = make_conversation(alice, title="old", contents=["x"])
    recent = make_conversation(alice, title="recent")
    active = make_conversation(alice, title="active")
    Conversation.objects.filter(pk=old.pk).update(
        status="archived", archived_at=now - timedelta(days=31)
    )
    Conversation.objects.filter(pk=recent.pk).update(
        status="archived", archived_at=now - timedelta(days=29)
    )
    Conversation.objects.filter(pk=active.pk).update(created_at=now - timedelta(days=400))
    assert purge_archived_conversations(dry_run=True) == 1
    call_command("purge_archived")
    assert set(Conversation.objects.values_list("title", flat=True)) == {"recent", "active"}


def test_retention_of_zero_days_keeps_everything(alice, settings):
    settings.CHAT_RETENTION_ARCHIVED_DAYS = 0
    c = make_conversation(alice)
    Conversation.objects.filter(pk=c.pk).update(
        status="archived", archived_at=timezone.now() - timedelta(days=9999)
    )
    assert purge_archived_conversations() == 0
    assert Conversation.objects.count() == 1
