from __future__ import annotations

import io
import json
import zipfile
from urllib.parse import quote

import pytest

from conversations.models import Conversation
from transfers.export_format import ExportedConversation, ExportedMessage

from .conftest import make_conversation

pytestmark = pytest.mark.django_db

CONTENTS = ["Hello **there**", "Hi! 안녕하세요", "Plan the <trip>", "Sure:\n- Busan\n- Seoul"]


def _body(response) -> bytes:
    return b"".join(response)  # an async stream, read the way a sync server would


@pytest.mark.parametrize("fmt", ["markdown", "json", "text"])
def test_export_is_an_attachment_in_each_format(api, alice, fmt):
    conversation = make_conversation(alice, title="Trip plans", contents=CONTENTS)
    response = api.get(f"/conversations/{conversation.id}/export", format=fmt)
    assert response.status_code == 200
    assert response.streaming
    disposition = response["Content-Disposition"]
    assert disposition.startswith("attachment;")
    ext = {"markdown": "md", "json": "json", "text": "txt"}[fmt]
    assert "Trip-plans-" in disposition and disposition.endswith(f'.{ext}"')
    text = _body(response).decode()
    for content in CONTENTS:
        assert (json.dumps(content, ensure_ascii=False)[1:-1] if fmt == "json" else content) in text


def test_markdown_with_metadata_shows_models_and_tokens(api, alice):
    conversation = make_conversation(alice, contents=CONTENTS)
    plain = _body(api.get(f"/conversations/{conversation.id}/export", format="markdown"))
    rich = _body(
        api.get(f"/conversations/{conversation.id}/export", format="markdown", include_metadata=1)
    )
    assert b"offline" not in plain
    assert b"model offline" in rich and b"tokens" in rich


def test_korean_title_gets_an_rfc5987_filename(api, alice):
    conversation = make_conversation(alice, title="회의 메모", contents=["a"])
    response = api.get(f"/conversations/{conversation.id}/export", format="text")
    disposition = response["Content-Disposition"]
    assert "filename*=utf-8''" in disposition.lower()
    assert quote("회의-메모") in disposition


def test_html_download_route_serves_the_same_file(alice_client, alice):
    conversation = make_conversation(alice, title="Trip", contents=CONTENTS)
    response = alice_client.get(
        f"/conversations/{conversation.id}/export/?format=json&include_metadata=1"
    )
    assert response.status_code == 200
    data = json.loads(_body(response))
    assert data["include_metadata"] is True
    assert [m["content"] for m in data["messages"]] == CONTENTS


def test_html_download_of_someone_elses_conversation_is_404(bob_client, alice):
    conversation = make_conversation(alice, contents=["a"])
    assert bob_client.get(f"/conversations/{conversation.id}/export/").status_code == 404


@pytest.mark.parametrize("include_metadata", [False, True])
def test_json_export_imports_back_identical(api, alice, bob, bob_api, include_metadata):
    source = make_conversation(alice, title="Round trip", contents=CONTENTS)
    params = {"format": "json"} | ({"include_metadata": 1} if include_metadata else {})
    raw = _body(api.get(f"/conversations/{source.id}/export", **params))
    data = json.loads(raw)
    assert data["format"] == "chatsite.conversation" and data["version"] == 1
    response = bob_api.post_raw("/conversations/import", raw)
    assert response.status_code == 201, response.content
    body = response.json()
    copy = Conversation.objects.get(pk=body["id"])
    assert copy.created_by == bob and copy.title == "Round trip"
    fields = ("role", "content", "parts", "sequence_number", "created_at")
    if include_metadata:
        fields += ("model", "tokens_used", "finish_reason", "metadata")
    originals = list(source.messages.order_by("sequence_number").values(*fields))
    copies = list(copy.messages.order_by("sequence_number").values(*fields))
    assert copies == originals
    assert body["message_count"] == len(CONTENTS)
    if include_metadata:
        assert copy.total_tokens_used == source.total_tokens_used
    assert copy.last_message_at == source.last_message_at


def test_every_field_of_the_export_class_is_written_and_the_settings_come_back(
    api, alice, bob, bob_api
):
    """Exports write `ExportedConversation` and `ExportedMessage`, imports read them: one
    list of fields each."""
    source = make_conversation(
        alice,
        title="Settings",
        contents=CONTENTS,
        description="kept",
        service_id="svc-1",
        system_prompt="Answer in haiku.",
        temperature=0.3,
    )
    Conversation.objects.filter(pk=source.pk).update(pinned=True, summary="A summary.")
    for include_metadata, expected in (
        (True, set(ExportedConversation.model_fields)),
        (False, set(ExportedConversation.model_fields) - ExportedConversation.METADATA),
    ):
        params = {"format": "json"} | ({"include_metadata": 1} if include_metadata else {})
        raw = _body(api.get(f"/conversations/{source.id}/export", **params))
        assert set(json.loads(raw)["conversation"]) == expected
        message_fields = set(ExportedMessage.model_fields)
        if not include_metadata:
            message_fields -= ExportedMessage.METADATA
        assert [set(m) for m in json.loads(raw)["messages"]] == [message_fields] * len(CONTENTS)
    response = bob_api.post_raw("/conversations/import", raw)
    assert response.status_code == 201, response.content
    copy = Conversation.objects.get(pk=response.json()["id"])
    kept = ("title", "description", "service_id", "system_prompt", "temperature", "pinned")
    source.refresh_from_db()
    assert [getattr(copy, f) for f in kept] == [getattr(source, f) for f in kept]
    assert copy.summary == "A summary."


def test_import_accepts_a_multipart_file(api, alice):
    source = make_conversation(alice, contents=CONTENTS)
    raw = _body(api.get(f"/conversations/{source.id}/export", format="json"))
    response = api.client.post(
        "/api/v1/conversations/import",
        data={"file": io.BytesIO(raw)},
        headers=api.headers,
    )
    assert response.status_code == 201, response.content


def _export(**overrides):
    data = {
        "format": "chatsite.conversation",
        "version": 1,
        "conversation": {"title": "t"},
        "messages": [
            {"sequence_number": 1, "role": "user", "content": "a", "parts": []},
            {"sequence_number": 2, "role": "assistant", "content": "b", "parts": []},
        ],
    }
    data.update(overrides)
    return data


def _with_message(**fields):
    data = _export()
    data["messages"][1].update(fields)
    return data


@pytest.mark.parametrize(
    "raw",
    [
        b"{not json",
        b"\xff\xfe garbage",
        b"[]",
        b"[" * 100_000 + b"]" * 100_000,
        json.dumps(_export(format="other")),
        json.dumps(_export(version=99)),
        json.dumps(_export(conversation="t")),
        json.dumps(_export(conversation={"title": 5})),
        json.dumps(_export(conversation={"title": "x" * 201})),
        json.dumps(_export(messages={"a": 1})),
        json.dumps(_with_message(role="wizard")),
        json.dumps(_with_message(content=7)),
        json.dumps(_with_message(content="a\u0000b")),
        json.dumps(_with_message(sequence_number=1)),
        json.dumps(_with_message(sequence_number="2")),
        json.dumps(_with_message(sequence_number=-1)),
        json.dumps(_with_message(parts="x")),
        json.dumps(_with_message(parts=[{"no": "type"}])),
        json.dumps(_with_message(metadata=[1])),
        json.dumps(_with_message(created_at="yesterday")),
        json.dumps(_with_message(tokens_used=-5)),
        json.dumps(_with_message(finish_reason="boom")),
        json.dumps(_with_message(metadata={"k": "\ud800"})),
        json.dumps(_export(messages=[1, 2])),
        json.dumps(_with_message(metadata={"x": float("nan")})),
        # Each of these was stored once and then made the account answer 500 everywhere.
        json.dumps(_export(conversation={"title": "t", "summary_at": "0001-01-01T00:30:00+05:00"})),
        json.dumps(_with_message(created_at="9999-12-31T23:59:59-14:00")),
        json.dumps(_with_message(metadata={"x": 1})).replace('"x": 1', '"x": 1e999'),
        json.dumps(_with_message(metadata={"a\u0000": 1})),
        json.dumps(_export(initial_message="hi")),  # unknown fields are refused
        json.dumps(_with_message(colour="red")),
    ],
)
def test_broken_or_hostile_import_is_400_and_creates_nothing(api, raw):
    response = api.post_raw("/conversations/import", raw)
    assert response.status_code == 400, (raw[:80], response.content)
    error = response.json()["error"]
    assert error["code"] == "invalid_import" and error["message"]
    assert not Conversation.objects.exists()
    assert api.get("/conversations").status_code == 200  # the account is still usable


def test_an_odd_but_real_time_is_stored_in_utc_and_the_account_stays_usable(api):
    raw = json.dumps(_with_message(created_at="2020-01-01T00:00:00-23:59"))
    created = api.post_raw("/conversations/import", raw)
    assert created.status_code == 201
    conversation_id = created.json()["id"]
    stored = api.get(f"/conversations/{conversation_id}/messages").json()["items"][1]
    assert stored["created_at"].startswith("2020-01-01T23:59:00")
    assert api.get("/conversations").status_code == 200
    assert api.get(f"/conversations/{conversation_id}/export", format="json").status_code == 200
    assert api.delete(f"/conversations/{conversation_id}").status_code == 204


def test_an_import_error_names_the_field(api):
    raw = json.dumps(_with_message(created_at="9999-12-31T23:59:59-14:00"))
    message = api.post_raw("/conversations/import", raw).json()["error"]["message"]
    assert message.startswith("messages.1.created_at")


def test_huge_import_is_413(api, settings):
    settings.CHAT_IMPORT_MAX_BYTES = 1000
    response = api.post_raw("/conversations/import", json.dumps(_export()) + " " * 2000)
    assert response.status_code == 413
    assert not Conversation.objects.exists()


def test_bulk_export_is_a_zip_with_one_file_each(api, alice):
    a = make_conversation(alice, title="A", contents=["one"])
    b = make_conversation(alice, title="B", contents=["two"])
    response = api.post(
        "/conversations/bulk", {"action": "export", "ids": [str(a.id), str(b.id)], "format": "text"}
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(_body(response)))
    names = sorted(archive.namelist())
    assert len(names) == 2 and names[0].startswith("A-") and names[1].startswith("B-")
    assert "two" in archive.read(names[1]).decode()
