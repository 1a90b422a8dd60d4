"""A NUL in an admin filter or search is a 400, never a 500 (our own pages explain it)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client, make_user):
    client.force_login(make_user("moderator", is_staff=True, is_superuser=True))
    return client


@pytest.mark.parametrize(
    "address",
    [
        "/admin/audit/auditentry/?action__exact=%00",
        "/admin/audit/auditentry/export.csv?action__exact=%00",
        "/admin/conversations/conversation/?status__exact=%00",
        "/admin/conversations/message/?role__exact=%00",
        "/admin/presets/preset/?knowledge_scope__exact=%00",
        "/admin/conversations/conversation/?q=a%00b",
    ],
)
def test_a_nul_in_a_filter_is_refused_not_a_server_error(staff, address):
    response = staff.get(address)
    assert response.status_code == 400
    assert b"NUL" in response.content


def test_the_api_and_our_pages_keep_their_own_answers_to_a_nul(staff):
    response = staff.get("/api/v1/conversations?q=%00")
    assert response.status_code == 422  # its schema's, in the API's shape
    assert response.json()["error"]["code"] == "invalid"
    page = staff.get("/conversations/?q=%00")
    assert page.status_code == 200 and page.context["filter_error"]  # explained in place


def test_a_filter_without_nul_still_works(staff):
    assert staff.get("/admin/audit/auditentry/?action__exact=sso.linked").status_code == 200
