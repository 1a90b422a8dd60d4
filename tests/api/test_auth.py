from __future__ import annotations

import json

import pytest
from django.test import Client

from .conftest import API, make_conversation

pytestmark = pytest.mark.django_db


def test_anonymous_request_gets_401_json_not_a_login_redirect():
    response = Client().get(f"{API}/conversations")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_bad_bearer_token_gets_401():
    response = Client().get(f"{API}/conversations", headers={"Authorization": "Bearer cht_nope"})
    assert response.status_code == 401
    assert set(response.json()["error"]) == {"code", "message"}


def test_session_login_works_for_reads(alice_client, alice):
    make_conversation(alice, title="Mine")
    response = alice_client.get(f"{API}/conversations")
    assert response.status_code == 200
    assert [c["title"] for c in response.json()["items"]] == ["Mine"]


def test_session_write_without_csrf_token_is_refused(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post(
        f"{API}/conversations", data=json.dumps({"title": "x"}), content_type="application/json"
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_session_write_with_csrf_token_is_accepted(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    client.get("/")  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    response = client.post(
        f"{API}/conversations",
        data=json.dumps({"title": "x"}),
        content_type="application/json",
        headers={"X-CSRFToken": token},
    )
    assert response.status_code == 201


def test_bearer_write_needs_no_csrf_token(alice, api):
    api.client = Client(enforce_csrf_checks=True)
    assert api.post("/conversations", {"title": "from a script"}).status_code == 201


def test_openapi_schema_is_served_and_lists_spec_paths():
    response = Client().get(f"{API}/openapi.json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in [
        "/api/v1/conversations",
        "/api/v1/conversations/{conversation_id}",
        "/api/v1/conversations/{conversation_id}/messages",
        "/api/v1/conversations/{conversation_id}/fork",
        "/api/v1/conversations/{conversation_id}/summarize",
        "/api/v1/conversations/{conversation_id}/export",
        "/api/v1/conversations/import",
        "/api/v1/search/messages",
        "/api/v1/messages/{message_id}/feedback",
        "/api/v1/messages/{message_id}",
    ]:
        assert path in paths, path
