"""Moderation in the admin: reports flag their conversation, the queue shows them in
context, and staff dismiss or delete them; every step is in the audit log."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from accounts.tokens import create_api_token
from audit.models import AuditEntry
from conversations import services
from conversations.models import Conversation, Message
from tests.support import seed

pytestmark = pytest.mark.django_db

LIST = "/admin/conversations/conversation/"
QUEUE = "/admin/conversations/message/reports/"


@pytest.fixture
def moderator(make_user):
    return make_user("moderator", is_staff=True, is_superuser=True)


@pytest.fixture
def staff_client(moderator):
    c = Client()
    c.force_login(moderator)
    return c


def chat(user, title: str, contents: list[str]) -> tuple[Conversation, list[Message]]:
    conversation = services.create_conversation(user=user, title=title)
    rows = [
        seed.add_message(
            conversation_id=conversation.id, role="user" if i % 2 == 0 else "assistant", content=c
        )
        for i, c in enumerate(contents)
    ]
    return conversation, rows


def report(user, message: Message, reason: str) -> None:
    """Report a message as its owner does: through the API."""
    token = create_api_token(user=user, name="t").secret
    response = Client().post(
        f"/api/v1/messages/{message.id}/report",
        data=json.dumps({"reason": reason}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200


def test_a_reported_message_marks_its_conversation_in_the_admin_list(staff_client, alice):
    reported, rows = chat(alice, "Rude reply", ["hi", "rude words", "why?", "more"])
    chat(alice, "Calm chat", ["hello", "hello back"])
    report(alice, rows[1], "rude")
    report(alice, rows[3], "still rude")
    page = staff_client.get(LIST).content.decode()
    assert f"{QUEUE}?conversation={reported.id}" in page  # the mark links to its reports
    assert "⚑ 2" in page
    assert page.count('class="reported-mark') == 1  # the calm chat's row has no mark
    assert "icon-no.svg" not in page  # no row of red crosses
    assert '<td class="field-reported"></td>' in page  # nor a dash: blank
    index = staff_client.get("/admin/").content.decode()
    assert QUEUE in index and "2 waiting" in index
    staff_flagged = services.create_conversation(user=alice, title="Odd")
    staff_client.post(LIST, {"action": "flag", "_selected_action": [str(staff_flagged.id)]})
    assert "⚑ staff" in staff_client.get(LIST).content.decode()


def test_the_reported_filter_finds_reported_flagged_and_untouched_conversations(
    staff_client, alice
):
    _, rows = chat(alice, "Reported one", ["q", "bad answer"])
    chat(alice, "Untouched one", ["q", "fine answer"])
    flagged = services.create_conversation(user=alice, title="Flagged one")
    Conversation.objects.filter(pk=flagged.pk).update(is_flagged=True, flag_reason="spam")
    report(alice, rows[1], "wrong")

    def titles(value: str) -> set[str]:
        text = staff_client.get(LIST, {"reported": value}).content.decode()
        return {t for t in ("Reported one", "Untouched one", "Flagged one") if t in text}

    assert titles("messages") == {"Reported one"}
    assert titles("staff") == {"Flagged one"}
    assert titles("none") == {"Untouched one"}


def test_the_queue_shows_the_reported_text_between_its_neighbours_on_its_branch(
    staff_client, alice
):
    conversation, rows = chat(alice, "Context", ["first q", "first a", "second q", "bad a"])
    seed.add_message(conversation_id=conversation.id, role="user", content="after the bad one")
    # Another branch under the same question: not this message's context.
    seed.add_message(
        conversation_id=conversation.id, role="assistant", content="other take", parent=rows[2]
    )
    report(alice, rows[3], "made things up")
    page = staff_client.get(QUEUE)
    assert page.status_code == 200
    text = page.content.decode()
    assert "made things up" in text and "alice" in text
    reported = text.index("is-reported")
    assert text.index("second q") < reported < text.index("bad a") < text.index("after the bad one")
    assert "first a" not in text and "other take" not in text
    assert 'name="csrfmiddlewaretoken"' in text
    # From the conversation list's mark: only that conversation's reports.
    _, others = chat(alice, "Elsewhere", ["x", "elsewhere answer"])
    report(alice, others[1], "other reason")
    text = staff_client.get(QUEUE, {"conversation": str(conversation.id)}).content.decode()
    assert "made things up" in text and "other reason" not in text


def test_dismiss_clears_the_report_keeps_the_message_and_is_audited(staff_client, moderator, alice):
    conversation, rows = chat(alice, "Dismissable", ["q", "fine after all"])
    report(alice, rows[1], "not sure")
    response = staff_client.post(f"{QUEUE}{rows[1].id}/dismiss/")
    assert response.status_code == 302 and response["Location"] == QUEUE
    message = Message.objects.get(pk=rows[1].pk)
    assert not message.is_flagged and message.flag_reason == ""
    assert "reported_at" not in message.metadata
    entry = AuditEntry.objects.get()
    assert (entry.actor_id, entry.actor_name, entry.action) == (
        moderator.pk,
        "moderator",
        "report.dismissed",
    )
    assert (entry.target_type, entry.target_id) == ("conversations.message", str(message.pk))
    assert entry.detail["reason"] == "not sure" and entry.detail["owner"] == "alice"
    assert entry.detail["conversation_id"] == str(conversation.id) and entry.created_at
    assert "fine after all" not in staff_client.get(QUEUE).content.decode()
    # Dismissed twice (two moderators at once): the second changes and records nothing.
    staff_client.post(f"{QUEUE}{rows[1].id}/dismiss/")
    assert AuditEntry.objects.count() == 1


def test_delete_from_the_queue_asks_first_then_removes_the_subtree_and_is_audited(
    staff_client, moderator, alice
):
    conversation, rows = chat(alice, "Deletable", ["q1", "a1", "nasty q", "a2", "q3"])
    report(alice, rows[2], "abuse")
    confirm = staff_client.get(f"{QUEUE}{rows[2].id}/delete/")
    assert confirm.status_code == 200
    assert "nasty q" in confirm.content.decode()
    assert Message.objects.filter(pk=rows[2].pk).exists()  # asking deletes nothing
    response = staff_client.post(f"{QUEUE}{rows[2].id}/delete/")
    assert response.status_code == 302
    left = list(Message.objects.filter(conversation=conversation).order_by("sequence_number"))
    assert [m.content for m in left] == ["q1", "a1"]
    conversation.refresh_from_db()
    assert conversation.message_count == 2 and conversation.current_message_id == left[-1].id
    entry = AuditEntry.objects.get()
    assert (entry.actor_name, entry.action, entry.target_id) == (
        "moderator",
        "message.deleted",
        str(rows[2].id),
    )
    assert entry.detail["messages_deleted"] == 3 and entry.detail["reason"] == "abuse"


def test_people_who_are_not_staff_get_no_queue_and_change_nothing(alice, bob_client):
    _, rows = chat(alice, "Private", ["q", "reported answer"])
    report(alice, rows[1], "rude")
    for response in (
        bob_client.get(QUEUE),
        bob_client.post(f"{QUEUE}{rows[1].id}/dismiss/"),
        bob_client.post(f"{QUEUE}{rows[1].id}/delete/"),
        Client().post(f"{QUEUE}{rows[1].id}/delete/"),
    ):
        assert response.status_code == 302 and "login/" in response["Location"]
    message = Message.objects.get(pk=rows[1].pk)
    assert message.is_flagged and message.flag_reason == "rude"
    assert not AuditEntry.objects.exists()


def test_staff_without_the_permissions_may_not_dismiss_or_delete(make_user, alice):
    helper = make_user("helper", is_staff=True)
    helper.user_permissions.add(Permission.objects.get(codename="view_message"))
    client = Client()
    client.force_login(helper)
    _, rows = chat(alice, "Watched", ["q", "reported answer"])
    report(alice, rows[1], "rude")
    page = client.get(QUEUE).content.decode()
    assert "reported answer" in page and "/dismiss/" not in page and "/delete/" not in page
    assert client.post(f"{QUEUE}{rows[1].id}/dismiss/").status_code == 403
    assert client.post(f"{QUEUE}{rows[1].id}/delete/").status_code == 403
    assert Message.objects.get(pk=rows[1].pk).is_flagged
    assert not AuditEntry.objects.exists()


def test_bad_ids_and_methods_get_a_clear_answer_and_change_nothing(staff_client, moderator, alice):
    _, rows = chat(alice, "Kept", ["q", "reported answer"])
    report(alice, rows[1], "rude")
    forged = Client(enforce_csrf_checks=True)
    forged.force_login(moderator)
    assert forged.post(f"{QUEUE}{rows[1].id}/delete/").status_code == 403  # no CSRF token
    assert forged.post(f"{QUEUE}{rows[1].id}/dismiss/").status_code == 403
    assert staff_client.get(QUEUE, {"conversation": "nope\x00"}).status_code == 400
    assert staff_client.get(QUEUE, {"conversation": "9" * 5000}).status_code == 400
    missing = "00000000-0000-0000-0000-000000000000"
    assert staff_client.get(QUEUE, {"conversation": missing}).status_code == 404
    assert staff_client.get(QUEUE, {"page": "99999"}).status_code == 200
    assert staff_client.get(f"{QUEUE}{rows[1].id}/dismiss/").status_code == 405
    # Not a message id: the admin's own "no such object" path (its catch-all URL).
    assert staff_client.post(f"{QUEUE}not-a-uuid/dismiss/").status_code in {302, 404}
    assert staff_client.post(f"{QUEUE}{missing}/dismiss/").status_code == 302
    assert staff_client.post(f"{QUEUE}{missing}/delete/").status_code == 302
    assert Message.objects.get(pk=rows[1].pk).is_flagged
    assert Message.objects.count() == 2 and not AuditEntry.objects.exists()


def test_deletes_in_the_admin_lists_are_audited(staff_client, alice, monkeypatch):
    from conversations.replies import threads

    monkeypatch.setattr(threads, "delete_agent_thread", lambda conversation_id: None)
    conversation, _ = chat(alice, "Doomed", ["q", "a"])
    staff_client.post(
        LIST,
        {"action": "delete_selected", "_selected_action": [str(conversation.id)], "post": "yes"},
    )
    assert not Conversation.objects.filter(pk=conversation.pk).exists()
    other, rows = chat(alice, "Trimmed", ["q", "a", "q2", "a2"])
    staff_client.post(
        "/admin/conversations/message/",
        {"action": "delete_selected", "_selected_action": [str(rows[2].id)], "post": "yes"},
    )
    assert list(other.messages.values_list("content", flat=True)) == ["q", "a"]
    staff_client.post(f"/admin/conversations/message/{rows[1].id}/delete/", {"post": "yes"})
    assert list(other.messages.values_list("content", flat=True)) == ["q"]
    entries = list(AuditEntry.objects.order_by("id").values_list("action", "target_repr"))
    assert entries[0] == ("conversation.deleted", "Doomed")
    assert [action for action, _ in entries] == [
        "conversation.deleted",
        "message.deleted",
        "message.deleted",
    ]
    assert AuditEntry.objects.filter(detail__owner="alice").count() == 3


def test_the_queue_lists_the_newest_report_first_and_undated_ones_last(staff_client, alice):
    _, rows = chat(alice, "Order", ["q", "older report", "q2", "newer report", "q3", "undated"])
    report(alice, rows[1], "first")
    report(alice, rows[3], "second")
    # A report made before reports noted their time.
    Message.objects.filter(pk=rows[5].pk).update(is_flagged=True, flag_reason="legacy")
    text = staff_client.get(QUEUE).content.decode()
    assert text.index("newer report") < text.index("older report") < text.index("undated")


def test_the_conversation_page_marks_only_the_reported_message(staff_client, alice):
    conversation, rows = chat(alice, "Marked", ["q", "reported answer", "q2", "fine answer"])
    report(alice, rows[1], "rude")
    page = staff_client.get(f"{LIST}{conversation.id}/change/").content.decode()
    assert page.count('<span class="reported-mark" title="rude">⚑</span>') == 1
    assert "icon-no.svg" not in page and "icon-yes.svg" not in page
