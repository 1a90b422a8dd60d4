"""A NUL in an address or a query string is a 400, never a 500 (the admin's filters too)."""

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
        "/conversations/?q=%00",
    ],
)
def test_a_nul_in_a_filter_is_refused_not_a_server_error(staff, address):
    response = staff.get(address)
    assert response.status_code == 400
    assert b"NUL" in response.content


def test_the_api_answers_a_nul_in_its_query_in_its_own_error_shape(staff):
    response = staff.get("/api/v1/conversations?q=%00")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"


def test_a_filter_without_nul_still_works(staff):
    assert staff.get("/admin/audit/auditentry/?action__exact=sso.linked").status_code == 200
