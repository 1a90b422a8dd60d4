"""Bad dates get a clear 422 and staff figures are staff's only: a non-staff user is told
the admin endpoint does not exist; budget changes in the admin are audited."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from accounts.tokens import create_api_token
from audit.models import AuditEntry
from usage.models import Budget

pytestmark = pytest.mark.django_db

BAD_RANGES = [
    {"from": "2026-13-01"},
    {"from": "yesterday"},
    {"from": "2026-11-20", "to": "2026-11-01"},  # from after to
    {"from": "2024-01-01", "to": "2026-01-01"},  # more than 366 days
    {"from": "9999-12-31"},
    {"to": "0001-01-01"},
    {"from": "2026-11-01\x00"},
    {"group": "week"},
    {"group": "user"},  # a staff grouping, not yours
]


def bearer(user) -> dict[str, str]:
    return {"Authorization": f"Bearer {create_api_token(user=user, name='t').secret}"}


@pytest.mark.parametrize("params", BAD_RANGES)
def test_bad_dates_or_groupings_are_refused_with_422(alice, params):
    response = Client().get("/api/v1/usage", params, headers=bearer(alice))
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "invalid"


def test_a_format_other_than_json_or_csv_is_refused(staff):
    headers = bearer(staff)
    bad = Client().get("/api/v1/admin/usage", {"format": "xlsx"}, headers=headers)
    assert bad.status_code == 422


def test_a_range_answers_its_own_days_and_defaults_to_this_month(alice):
    body = (
        Client()
        .get("/api/v1/usage", {"from": "2026-02-01", "to": "2026-02-28"}, headers=bearer(alice))
        .json()
    )
    assert (body["from"], body["to"], body["items"]) == ("2026-02-01", "2026-02-28", [])
    assert body["total"]["total_tokens"] == 0 and body["budget"]["monthly_tokens"] is None
    this_month = Client().get("/api/v1/usage", headers=bearer(alice)).json()
    assert this_month["from"].endswith("-01")


def test_a_user_who_is_not_staff_is_told_the_admin_usage_does_not_exist(alice):
    response = Client().get("/api/v1/admin/usage", headers=bearer(alice))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    page = Client()
    page.force_login(alice)
    assert page.get("/admin/usage/").status_code == 302  # to the admin's login, like /admin/


def test_the_usage_page_says_what_is_wrong_with_bad_dates(alice_client):
    response = alice_client.get("/usage/", {"from": "2026-11-20", "to": "2026-11-01"})
    assert response.status_code == 400
    assert "must not be after" in response.content.decode()


def test_changing_a_budget_in_the_admin_writes_an_audit_entry(staff, alice):
    client = Client()
    client.force_login(staff)
    added = client.post("/admin/usage/budget/add/", {"user": alice.pk, "monthly_tokens": 5000})
    assert added.status_code == 302, added.content.decode()[:2000]
    budget = Budget.objects.get(user=alice)
    client.post(
        f"/admin/usage/budget/{budget.pk}/change/", {"user": alice.pk, "monthly_tokens": 9000}
    )
    entries = list(
        AuditEntry.objects.filter(action=AuditEntry.Action.BUDGET_CHANGED).order_by("id")
    )
    assert [e.detail["after"]["monthly_tokens"] for e in entries] == [5000, 9000]
    assert entries[1].detail["before"]["monthly_tokens"] == 5000
    assert entries[1].actor_name == "root" and entries[1].target_id == str(budget.pk)


def test_a_budget_names_a_user_or_a_group_not_both(staff, alice):
    client = Client()
    client.force_login(staff)
    group = Group.objects.create(name="team")
    both = client.post(
        "/admin/usage/budget/add/", {"user": alice.pk, "group": group.pk, "monthly_tokens": 1}
    )
    assert both.status_code == 200 and "Choose either a user or a group." in both.content.decode()
    assert not Budget.objects.exists()
