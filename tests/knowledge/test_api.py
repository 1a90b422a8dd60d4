from __future__ import annotations

import base64
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from knowledge.models import Document

from .recall import corpus_files

pytestmark = pytest.mark.django_db
API = "/api/v1"


def _upload(client, name: str, data: bytes, **extra):
    return client.post(f"{API}/documents", {"file": SimpleUploadedFile(name, data), **extra})


def test_upload_list_read_search_and_delete(alice_client):
    for name, data in corpus_files():
        assert _upload(alice_client, name, data).status_code == 201
    listing = alice_client.get(f"{API}/documents").json()
    assert {d["filename"] for d in listing["items"]} == {"handbook_en.md", "취업규칙.txt"}
    assert listing["next_cursor"] is None
    first = listing["items"][0]
    detail = alice_client.get(f"{API}/documents/{first['id']}").json()
    assert detail["sections"] and detail["chunk_count"] >= 1
    hits = alice_client.get(f"{API}/search/documents", {"q": "육아휴직 신청", "k": 2}).json()[
        "items"
    ]
    assert hits[0]["section"] == "제7조(육아휴직)" and hits[0]["score"] > 0
    assert alice_client.delete(f"{API}/documents/{first['id']}").status_code == 204
    assert len(alice_client.get(f"{API}/documents").json()["items"]) == 1


def test_list_pages_with_a_cursor(alice_client):
    for n in range(3):
        _upload(alice_client, f"d{n}.txt", b"text")
    page = alice_client.get(f"{API}/documents", {"limit": 2}).json()
    assert len(page["items"]) == 2 and page["next_cursor"]
    rest = alice_client.get(f"{API}/documents", {"limit": 2, "cursor": page["next_cursor"]}).json()
    assert len(rest["items"]) == 1 and rest["next_cursor"] is None


@pytest.mark.parametrize(
    "values",
    [
        [{"t": "2020-01-01T00:00:00+00:00"}, 5],  # an id that is not a UUID
        ["yesterday", "00000000-0000-0000-0000-000000000001"],  # a time that is a string
        [{"t": "2020-01-01T00:00:00"}, "00000000-0000-0000-0000-000000000001"],  # no zone
        [{"t": "9999-12-31T23:59:59-14:00"}, "00000000-0000-0000-0000-000000000001"],
        [{"t": "0001-01-01T00:30:00+05:00"}, "00000000-0000-0000-0000-000000000001"],
        [1, 2, 3],
    ],
)
def test_a_tampered_cursor_is_refused_not_a_500(alice_client, values):
    from knowledge.api import CURSOR_KEY

    raw = json.dumps([CURSOR_KEY, values]).encode()
    cursor = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    response = alice_client.get(f"{API}/documents", {"cursor": cursor})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "bad_cursor"


@pytest.mark.parametrize(
    ("name", "data", "status", "code"),
    [
        ("empty.txt", b"", 422, "empty_file"),
        ("x.docx", b"PK\x03\x04", 422, "unsupported_type"),
        ("fake.pdf", b"hello", 422, "unreadable_file"),
    ],
)
def test_bad_uploads_answer_4xx_and_store_nothing(alice_client, name, data, status, code):
    response = _upload(alice_client, name, data)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert not Document.objects.exists()


def test_a_too_big_upload_answers_413(alice_client, settings):
    settings.KNOWLEDGE_MAX_UPLOAD_BYTES = 10
    response = _upload(alice_client, "big.txt", b"x" * 11)
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_long"


def test_other_users_documents_are_not_listed_read_deleted_or_searched(alice_client, bob_client):
    _upload(alice_client, "secret.md", b"# Secret\n\nThe vault code is 4711.")
    document_id = alice_client.get(f"{API}/documents").json()["items"][0]["id"]
    assert bob_client.get(f"{API}/documents").json()["items"] == []
    assert bob_client.get(f"{API}/documents/{document_id}").status_code == 404
    assert bob_client.delete(f"{API}/documents/{document_id}").status_code == 404
    assert bob_client.get(f"{API}/search/documents", {"q": "vault code"}).json()["items"] == []


def test_the_api_needs_authentication(client):
    assert client.get(f"{API}/documents").status_code == 401
