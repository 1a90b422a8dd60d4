from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from knowledge.models import Document

pytestmark = pytest.mark.django_db


def _upload(client, name: str, data: bytes, **extra):
    return client.post("/documents/", {"file": SimpleUploadedFile(name, data), **extra})


def test_the_documents_page_uploads_lists_previews_and_deletes(alice_client):
    page = alice_client.get("/documents/")
    assert page.status_code == 200 and b'enctype="multipart/form-data"' in page.content
    response = _upload(alice_client, "rules.md", b"## 1. Hours\n\nWork 40 hours.", title="Rules")
    document = Document.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/documents/{document.id}/"
    listing = alice_client.get("/documents/").content.decode()
    assert "Rules" in listing and "rules.md" in listing
    preview = alice_client.get(f"/documents/{document.id}/").content.decode()
    assert "1. Hours" in preview and "Work 40 hours." in preview
    confirm = alice_client.get(f"/documents/{document.id}/delete/")
    assert confirm.status_code == 200 and b'<form method="post">' in confirm.content
    assert alice_client.post(f"/documents/{document.id}/delete/").status_code == 302
    assert not Document.objects.exists()


def test_a_bad_upload_shows_the_error_and_stores_nothing(alice_client):
    response = _upload(alice_client, "fake.pdf", b"not a pdf")
    assert response.status_code == 422
    assert "not a PDF" in response.content.decode()
    assert _upload(alice_client, "x.exe", b"MZ").status_code == 422
    assert not Document.objects.exists()


def test_someone_elses_document_is_not_found(alice_client, bob_client):
    _upload(alice_client, "a.txt", b"alice's text")
    document = Document.objects.get()
    assert bob_client.get(f"/documents/{document.id}/").status_code == 404
    assert bob_client.post(f"/documents/{document.id}/delete/").status_code == 404
    assert b"a.txt" not in bob_client.get("/documents/").content
    assert Document.objects.exists()


def test_the_page_needs_a_login(client):
    assert client.get("/documents/").status_code == 302
