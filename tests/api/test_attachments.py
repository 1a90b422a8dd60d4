"""Attachments (SPEC "Attachments"): upload checked by content, owner-only reading, sent
with a message once, gone with their conversation, unsent ones purged."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from PIL import Image

from conversations import attachments
from conversations.models import Attachment

from .conftest import make_conversation

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def png(width: int = 40, height: int = 30) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


def upload(api, conversation, name: str, data: bytes):
    return api.client.post(
        f"/api/v1/conversations/{conversation.id}/attachments",
        {"file": SimpleUploadedFile(name, data)},
        headers=api.headers,
    )


def test_an_image_and_a_document_upload_and_read_back(api, alice):
    conversation = make_conversation(alice)
    image = upload(api, conversation, "빨간 점.png", png())
    assert image.status_code == 201, image.content
    body = image.json()
    assert body | {"id": "x", "url": "x"} == {
        "id": "x",
        "name": "빨간 점.png",
        "kind": "image",
        "content_type": "image/png",
        "size_bytes": len(png()),
        "url": "x",
    }
    got = api.client.get(body["url"], headers=api.headers)
    assert got.status_code == 200 and got["Content-Type"] == "image/png"
    assert got["Content-Disposition"].startswith("inline")
    assert b"".join(got.streaming_content) == png()
    assert "sandbox" in got["Content-Security-Policy"]

    doc = upload(api, conversation, "notes.md", "# 회의\n다음 주 화요일".encode())
    assert doc.status_code == 201
    assert doc.json()["kind"] == "document" and doc.json()["content_type"] == "text/markdown"
    download = api.client.get(doc.json()["url"], headers=api.headers)
    assert download["Content-Disposition"].startswith("attachment")
    document = Attachment.objects.get(pk=doc.json()["id"]).document
    assert document.text == "# 회의\n다음 주 화요일" and document.scope == conversation.id


@pytest.mark.parametrize(
    ("name", "data", "status"),
    [
        ("cat.png", b"not an image at all", 422),  # named an image, is not one
        ("run.exe", b"MZ\x90\x00", 422),
        ("page.html", b"<script>alert(1)</script>", 422),
        ("empty.txt", b"", 422),
        ("../../etc/passwd.txt", b"root:x", 201),  # only the name's last part is kept
        ("big.txt", b"x" * 2_000_001, 413),
        ("bomb.png", "BOMB", 422),  # 400 million pixels in a few KB
    ],
)
def test_uploads_are_checked_by_content_and_size(api, alice, settings, name, data, status):
    settings.ATTACHMENT_MAX_BYTES = 2_000_000
    if data == "BOMB":
        out = io.BytesIO()
        Image.new("1", (20_000, 20_000)).save(out, format="PNG")
        data = out.getvalue()
    conversation = make_conversation(alice)
    response = upload(api, conversation, name, data)
    assert response.status_code == status, response.content
    if status == 201:
        assert response.json()["name"] == "passwd.txt"
    else:
        assert not Attachment.objects.exists()


def test_other_users_get_404_everywhere(api, bob_api, alice):
    conversation = make_conversation(alice)
    body = upload(api, conversation, "a.png", png()).json()
    assert bob_api.client.get(body["url"], headers=bob_api.headers).status_code == 404
    assert upload(bob_api, conversation, "b.png", png()).status_code == 404
    assert api.client.get("/api/v1/attachments/not-a-uuid", headers=api.headers).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_an_attachment_is_sent_once_and_shown_with_its_message(api, alice, fake_agent_reply):
    conversation = make_conversation(alice)
    other = make_conversation(alice)
    first = upload(api, conversation, "a.png", png()).json()
    second = upload(api, conversation, "b.txt", b"hello").json()
    elsewhere = upload(api, other, "c.png", png()).json()
    url = f"/conversations/{conversation.id}/messages"
    sent = api.post(url, {"content": "look", "attachments": [first["id"], second["id"]]})
    assert sent.status_code == 201, sent.content
    shown = sent.json()["user_message"]["attachments"]
    assert [a["id"] for a in shown] == [first["id"], second["id"]]
    listed = api.get(url).json()["items"][0]["attachments"]
    assert [a["name"] for a in listed] == ["a.png", "b.txt"]
    # Already sent; another conversation's; too many; not ids.
    assert api.post(url, {"content": "again", "attachments": [first["id"]]}).status_code == 404
    assert api.post(url, {"content": "x", "attachments": [elsewhere["id"]]}).status_code == 404
    assert api.post(url, {"content": "x", "attachments": ["a"] * 11}).status_code == 422
    assert api.post(url, {"content": "x", "attachments": [1]}).status_code == 422
    assert conversation.messages.count() == 2  # none of the refused sends stored anything


def test_files_go_with_their_conversation_and_unsent_ones_are_purged(
    api, alice, media, django_capture_on_commit_callbacks
):
    conversation = make_conversation(alice)
    kept = make_conversation(alice)
    upload(api, conversation, "a.png", png())
    old = upload(api, kept, "old.png", png()).json()
    fresh = upload(api, kept, "new.png", png()).json()
    files = lambda: sorted(p.name for p in media.rglob("*") if p.is_file())  # noqa: E731
    assert len(files()) == 3
    with django_capture_on_commit_callbacks(execute=True):  # files go once it is committed
        assert api.delete(f"/conversations/{conversation.id}").status_code == 204
    assert len(files()) == 2
    Attachment.objects.filter(pk=old["id"]).update(created_at=timezone.now() - timedelta(days=2))
    with django_capture_on_commit_callbacks(execute=True):
        assert attachments.purge_unsent() == 1
    assert list(Attachment.objects.values_list("id", flat=True)) == [
        Attachment.objects.get(pk=fresh["id"]).pk
    ]
    assert len(files()) == 1


@pytest.fixture
def fake_agent_reply(monkeypatch):
    from conversations.replies import turns
    from tests.support.fake_turn import FakeAgent

    agent = FakeAgent(reply=lambda text: ["ok"], delay=0)
    monkeypatch.setattr(turns, "astart_turn", agent)
    return agent


@pytest.mark.django_db(transaction=True)
def test_exports_name_the_files_and_the_zip_carries_them(api, alice, fake_agent_reply):
    import json
    import zipfile

    conversation = make_conversation(alice, title="Trip")
    image = upload(api, conversation, "map.png", png()).json()
    doc = upload(api, conversation, "plan.txt", b"Day 1: Busan").json()
    unsent = upload(api, conversation, "draft.txt", b"never sent")
    assert unsent.status_code == 201
    url = f"/conversations/{conversation.id}/messages"
    assert (
        api.post(url, {"content": "here", "attachments": [image["id"], doc["id"]]}).status_code
        == 201
    )
    export = f"/conversations/{conversation.id}/export"
    markdown = b"".join(api.get(export, format="markdown")).decode()
    assert "*Attachments: map.png, plan.txt*" in markdown
    data = json.loads(b"".join(api.get(export, format="json")))
    assert data["messages"][0]["attachments"] == [
        {"name": "map.png", "kind": "image", "content_type": "image/png", "size_bytes": len(png())},
        {"name": "plan.txt", "kind": "document", "content_type": "text/plain", "size_bytes": 12},
    ]
    response = api.post(
        "/conversations/bulk", {"action": "export", "ids": [str(conversation.id)], "format": "json"}
    )
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response)))
    files = sorted(n for n in archive.namelist() if ".files/" in n)
    assert [n.rsplit("/", 1)[1] for n in files] == ["1-map.png", "2-plan.txt"]
    assert archive.read(files[0]) == png() and archive.read(files[1]) == b"Day 1: Busan"
    # Re-importing the JSON export (with its attachment metadata) still works.
    assert api.post_raw("/conversations/import", json.dumps(data)).status_code == 201


def test_an_attached_document_is_searched_in_its_conversation_only(api, alice):
    from knowledge.models import Document
    from knowledge.retrieval import retrieve
    from knowledge.selectors import list_documents, user_has_documents

    here = make_conversation(alice, title="Here")
    there = make_conversation(alice, title="There")
    text = b"# Leave policy\nAnnual leave is fifteen days for every employee."
    body = upload(api, here, "policy.md", text).json()
    hits = retrieve(user_id=alice.pk, query="annual leave days", k=3, scope=here.id)
    assert [h["document_title"] for h in hits] == ["policy.md"]
    assert "fifteen days" in hits[0]["text"]
    assert retrieve(user_id=alice.pk, query="annual leave days", k=3, scope=there.id) == []
    assert retrieve(user_id=alice.pk, query="annual leave days", k=3) == []
    assert list(list_documents(user=alice)) == []  # not in the knowledge base's list
    assert user_has_documents(alice.pk, here.id) and not user_has_documents(alice.pk, there.id)
    # Gone with the attachment (here: with its conversation).
    api.delete(f"/conversations/{here.id}")
    assert not Document.objects.exists()
    assert not Attachment.objects.filter(pk=body["id"]).exists()
