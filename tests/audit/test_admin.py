"""The audit log in the admin: listed, filtered, downloaded; never changed."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from audit.models import AuditEntry
from audit.services import record

pytestmark = pytest.mark.django_db

URL = "/admin/audit/auditentry/"
FORMULA = "=cmd|' /C calc'!A0"


@pytest.fixture
def superuser(make_user):
    return make_user("root", is_staff=True, is_superuser=True)


@pytest.fixture
def staff_client(superuser):
    c = Client()
    c.force_login(superuser)
    return c


@pytest.fixture
def entries(make_user, superuser):
    moderator = make_user("moderator", is_staff=True)
    return [
        record(actor=moderator, action=AuditEntry.Action.MESSAGE_DELETED, target_repr="spam one"),
        record(actor=superuser, action=AuditEntry.Action.REPORT_DISMISSED, target_repr="fine one"),
        record(actor=None, action=AuditEntry.Action.BUDGET_CHANGED, target_repr=FORMULA),
    ]


def download(client: Client, **params) -> list[list[str]]:
    response = client.get(URL + "export.csv", params)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith("attachment;")
    text = b"".join(response).decode("utf-8-sig")  # an async stream, read as a server would
    return list(csv.reader(io.StringIO(text)))


def test_staff_see_the_entries_with_who_what_and_target(staff_client, entries):
    page = staff_client.get(URL)
    assert page.status_code == 200
    text = page.content.decode()
    for expected in ("moderator", "spam one", "fine one", "Message deleted", "Report dismissed"):
        assert expected in text
    assert "export.csv" in text  # the "Download CSV" link


def test_the_action_filter_and_the_search_narrow_the_list(staff_client, entries):
    text = staff_client.get(URL, {"action__exact": "message.deleted"}).content.decode()
    assert "spam one" in text and "fine one" not in text
    text = staff_client.get(URL, {"q": "fine"}).content.decode()
    assert "fine one" in text and "spam one" not in text
    moderator_id = entries[0].actor_id
    text = staff_client.get(URL, {"actor": str(moderator_id)}).content.decode()
    assert "spam one" in text and "fine one" not in text
    text = staff_client.get(URL, {"actor": "system"}).content.decode()
    assert "calc" in text and "spam one" not in text


def test_the_csv_has_every_row_and_honours_the_filter(staff_client, entries):
    rows = download(staff_client)
    assert rows[0][:4] == ["created_at", "actor_id", "actor_name", "action"]
    assert sorted(r[6] for r in rows[1:]) == sorted(
        ["spam one", "fine one", "'" + FORMULA]  # a formula stays text
    )
    rows = download(staff_client, action__exact="report.dismissed")
    assert [(r[2], r[3], r[6]) for r in rows[1:]] == [("root", "report.dismissed", "fine one")]
    assert staff_client.get(URL + "export.csv", {"nonsense__field": "1"}).status_code == 400


def test_nobody_adds_changes_or_deletes_an_entry_in_the_admin(staff_client, entries):
    entry = entries[0]
    assert staff_client.get(URL + "add/").status_code == 403
    assert staff_client.get(f"{URL}{entry.pk}/delete/").status_code == 403
    assert staff_client.post(f"{URL}{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    changed = staff_client.post(f"{URL}{entry.pk}/change/", {"target_repr": "edited"})
    assert changed.status_code == 403
    view = staff_client.get(f"{URL}{entry.pk}/change/")  # read-only: no save button
    assert view.status_code == 200 and 'name="_save"' not in view.content.decode()
    bulk = staff_client.post(
        URL, {"action": "delete_selected", "_selected_action": [str(entry.pk)], "post": "yes"}
    )
    assert bulk.status_code in {200, 302}
    assert AuditEntry.objects.filter(pk=entry.pk, target_repr="spam one").exists()
    assert AuditEntry.objects.count() == 3


def test_people_who_are_not_staff_get_no_log_and_no_csv(alice_client, entries):
    for url in (URL, URL + "export.csv"):
        response = alice_client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
