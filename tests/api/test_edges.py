"""Input edges that answered 500 (or leaked) once: each answers a clear 4xx and changes nothing."""

from __future__ import annotations

import json
import logging

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from conversations.models import Conversation, Message, Project
from conversations.replies import summaries, turns
from core.redact import redact
from knowledge.chunking import MAX_SECTIONS, split_sections
from transfers import exports

from .conftest import API, make_conversation

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", ["a\u0000b", "\ud800", "ok"])
def test_project_names_that_text_cannot_hold_are_422(api, name):
    response = api.post("/projects", {"name": name})
    if name == "ok":
        assert response.status_code == 201
        project_id = response.json()["id"]
        assert api.patch(f"/projects/{project_id}", {"name": "x\u0000"}).status_code == 422
        assert Project.objects.get(pk=project_id).name == "ok"
        return
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid"
    assert not Project.objects.exists()


@pytest.mark.parametrize(
    "query",
    [
        {"from": "2020-02-30"},
        {"to": "2020-13-45"},
        {"q": "a\u0000b"},
        {"service": "\u0000"},
        {"project": "99999999999999999999999"},
        {"sort": "password"},
    ],
)
def test_the_list_page_explains_a_bad_filter_instead_of_failing(alice_client, query):
    response = alice_client.get("/conversations/", query)
    assert response.status_code == 200
    assert response.context["filter_error"]


def test_a_nul_in_the_new_conversation_title_is_refused(alice_client):
    response = alice_client.post("/conversations/new/", {"title": "a\u0000b", "content": "hi"})
    assert response.status_code == 400
    assert not Conversation.objects.exists()


def test_unknown_fields_are_refused_not_dropped(api):
    response = api.post("/conversations", {"title": "t", "colour": "red"})
    assert response.status_code == 422
    assert "colour" in response.json()["error"]["message"]
    assert not Conversation.objects.exists()


def test_infinity_in_a_json_body_is_400(api):
    response = api.post_raw("/conversations", '{"title": "t", "description": 1e999}')
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"


def test_a_thousand_character_upload_name_is_a_clear_error(api):
    # Written by hand: Django's test client would shorten the name to 255 characters.
    body = (
        "--XYZ\r\n"
        f'Content-Disposition: form-data; name="file"; filename="{"n" * 1000}.txt"\r\n'
        "Content-Type: text/plain\r\n\r\nhello\r\n--XYZ--\r\n"
    )
    response = api.post_raw("/documents", body, content_type="multipart/form-data; boundary=XYZ")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"


def test_summarize_while_the_model_fails_is_503_in_the_error_shape(api, alice, monkeypatch):
    async def failing(**kwargs):
        raise RuntimeError("HTTP 500 from the model server")

    monkeypatch.setattr(summaries, "asummarize_for_conversation", failing)
    conversation = make_conversation(alice, contents=["hello", "hi"])
    response = api.post(f"/conversations/{conversation.id}/summarize", {})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "llm_unavailable"
    conversation.refresh_from_db()
    assert conversation.summary == ""


def test_an_unexpected_api_error_is_json_even_without_debug(api, settings, monkeypatch):
    settings.DEBUG = False

    def broken(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr("conversations.search.list_conversations", broken)
    client = Client(raise_request_exception=False)
    response = client.get(f"{API}/conversations", headers=api.headers)
    assert response.status_code == 500
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error"]["code"] == "internal_error"


def test_no_token_secret_is_logged_with_debug_on(api, settings, caplog):
    settings.DEBUG = True
    secret = api.headers["Authorization"].split()[1]
    caplog.set_level(logging.DEBUG)
    Client().get(f"{API}/conversations", headers={"Authorization": f"Token {secret}"})
    assert secret not in caplog.text
    assert redact(f"header {secret} sent") == "header cht_[redacted] sent"


def test_export_filenames_drop_bidi_controls(alice):
    conversation = Conversation(title="invoice\u202etxt.exe", created_by=alice)
    assert "\u202e" not in exports.export_filename(conversation, "text")


def test_a_document_of_headings_only_is_bounded(api):
    text = "# heading\n" * 50_000
    assert len(split_sections(text)) == MAX_SECTIONS
    upload = SimpleUploadedFile("headings.md", text.encode())
    response = api.client.post(f"{API}/documents", {"file": upload}, headers=api.headers)
    assert response.status_code == 201


def test_pages_carry_a_content_security_policy(alice_client):
    policy = alice_client.get("/")["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy


def test_the_api_docs_page_loads_nothing_from_another_origin(client):
    page = client.get(f"{API}/docs").content.decode()
    assert "swagger-ui-bundle.js" in page
    assert "cdn." not in page and "https://" not in page


@pytest.mark.django_db(transaction=True)
async def test_initial_message_is_sent_as_the_first_message(alice, monkeypatch):
    from asgiref.sync import sync_to_async
    from django.test import AsyncClient

    from accounts.tokens import create_api_token
    from conversations.realtime.hub import aclose_hub
    from tests.support.fake_turn import FakeAgent

    monkeypatch.setattr(turns, "astart_turn", FakeAgent(delay=0))
    token = (await sync_to_async(create_api_token)(user=alice, name="t")).secret
    auth = {"Authorization": f"Bearer {token}"}
    try:
        response = await AsyncClient().post(
            f"{API}/conversations",
            {"title": "t", "initial_message": "hello"},
            content_type="application/json",
            headers=auth,
        )
        assert response.status_code == 201
        assert response.json()["message_count"] >= 1
        conversation_id = response.json()["id"]
        refused = await AsyncClient().post(
            f"{API}/conversations",
            {"title": "t2", "initial_message": "   "},
            content_type="application/json",
            headers=auth,
        )
        assert refused.status_code == 422
        assert await Conversation.objects.filter(created_by=alice).acount() == 1
    finally:
        await aclose_hub()  # the reply ends (stored) before the test's loop does
    stored = [
        (m.role, m.content)
        async for m in Message.objects.filter(conversation_id=conversation_id).order_by(
            "sequence_number"
        )
    ]
    assert stored[0] == ("user", "hello") and stored[1][0] == "assistant"


@pytest.mark.parametrize(
    ("language", "said"),
    [
        (
            "en",
            "command: not in the form this takes; title: at most 80 characters;"
            " extra: not a field this takes",
        ),
        ("ko", "command: 형식이 맞지 않습니다; title: 최대 80자; extra: 받지 않는 항목입니다"),
    ],
)
def test_a_refusal_names_the_field_and_says_what_is_wrong_in_the_readers_language(
    api, alice, language, said
):
    """pydantic's own sentences were English on a Korean page, and named the view's
    parameter ("payload.title: String should have at most 80 characters")."""
    api.headers["Accept-Language"] = language
    body = {"command": "Bad!", "title": "t" * 81, "content": "c", "extra": 1}
    refused = api.post("/prompts", body)
    assert refused.status_code == 422
    assert refused.json()["error"] == {"code": "invalid", "message": said}
    limit = api.get("/conversations", limit="many").json()["error"]["message"]
    assert (
        limit == {"en": "limit: a whole number expected", "ko": "limit: 정수여야 합니다"}[language]
    )
    assert not alice.prompts.exists()


@pytest.mark.parametrize("when", [123, "123", -1, "-1.5", True])
def test_a_number_is_not_a_time_and_true_is_not_a_version(api, alice, when):
    """pydantic read 123 as seconds since 1970: a wrong value in an import became a date."""
    source = make_conversation(alice, contents=["hi", "hello"])
    exported = api.get(f"/conversations/{source.id}/export", format="json")
    data = json.loads(b"".join(exported))  # an async stream, read as a sync server would
    data["conversation"]["created_at"] = when
    refused = api.post("/conversations/import", data)
    assert refused.status_code == 400, refused.content
    assert refused.json()["error"] == {
        "code": "invalid_import",
        "message": "conversation.created_at: a date and time expected (ISO 8601)",
    }
    assert api.get("/conversations", created_after=str(when)).status_code == 422
    assert Conversation.objects.count() == 1  # the one exported, nothing imported
    prompts = {"format": "chat-prompts", "version": True, "prompts": []}
    assert api.post("/prompts/import", prompts).status_code == 422
