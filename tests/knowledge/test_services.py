from __future__ import annotations

import pytest

from core.errors import Invalid, NotFound, TooLarge
from knowledge import selectors, services
from knowledge.models import Document, DocumentChunk

from .conftest import make_pdf
from .recall import upload_corpus

pytestmark = pytest.mark.django_db


def test_a_markdown_upload_is_stored_with_sections_and_chunks(alice):
    document = services.upload_document(
        user=alice, filename="policy.md", data=b"# Policy\n\n## 1. Leave\n\nTake leave."
    )
    assert (document.title, document.kind) == ("policy", "md")
    assert document.section_count == 2 and document.chunk_count == 1
    chunk = DocumentChunk.objects.get(document=document)
    assert (chunk.heading, chunk.text, chunk.owner_id) == ("1. Leave", "Take leave.", alice.id)


def test_a_pdf_upload_is_extracted(alice):
    pdf = make_pdf(["1. Security", "Lock your screen when you leave."])
    document = services.upload_document(user=alice, filename="sec.pdf", data=pdf)
    assert document.kind == "pdf"
    assert "Lock your screen" in document.text


def test_cp949_text_is_decoded(alice):
    document = services.upload_document(
        user=alice, filename="규정.txt", data="제1조(목적) 회사 규정.".encode("cp949")
    )
    assert document.text.startswith("제1조")


@pytest.mark.parametrize(
    ("filename", "data", "error", "code"),
    [
        ("empty.txt", b"", Invalid, "empty_file"),
        ("blank.md", b"  \n\n ", Invalid, "empty_file"),
        ("image.png", b"\x89PNG....", Invalid, "unsupported_type"),
        ("noext", b"hello", Invalid, "unsupported_type"),
        ("fake.pdf", b"this is not a pdf at all", Invalid, "unreadable_file"),
        ("broken.pdf", b"%PDF-1.4\n1 0 obj garbage", Invalid, "unreadable_file"),
        ("binary.txt", b"ab\x00cd" * 10, Invalid, "unreadable_file"),
    ],
)
def test_bad_uploads_are_refused_and_nothing_is_stored(alice, filename, data, error, code):
    with pytest.raises(error) as caught:
        services.upload_document(user=alice, filename=filename, data=data)
    assert caught.value.code == code
    assert not Document.objects.exists() and not DocumentChunk.objects.exists()


def test_a_file_over_the_limit_is_refused(alice, settings):
    settings.KNOWLEDGE_MAX_UPLOAD_BYTES = 100
    with pytest.raises(TooLarge):
        services.upload_document(user=alice, filename="big.txt", data=b"x " * 100)
    assert not Document.objects.exists()


def test_a_failure_while_storing_chunks_leaves_nothing(alice, monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(DocumentChunk.objects, "bulk_create", explode)
    with pytest.raises(RuntimeError):
        services.upload_document(user=alice, filename="a.txt", data=b"some text")
    assert not Document.objects.exists()


def test_deleting_removes_chunks_and_someone_elses_document_is_not_found(alice, bob):
    document = services.upload_document(user=alice, filename="a.txt", data=b"some text")
    with pytest.raises(NotFound):
        services.delete_document(user=bob, document_id=document.id)
    services.delete_document(user=alice, document_id=document.id)
    assert not DocumentChunk.objects.exists()
    assert not selectors.user_has_documents(alice.id)


def test_user_has_documents_is_per_user(alice, bob):
    services.upload_document(user=alice, filename="a.txt", data=b"some text")
    assert selectors.user_has_documents(alice.id)
    assert not selectors.user_has_documents(bob.id)


def test_a_section_is_found_by_number_or_title_and_document_by_title_or_id(alice, bob):
    ids = upload_corpus(alice)
    by_number = selectors.get_document_section(
        user_id=alice.id, document="handbook en", section="3.2"
    )
    assert by_number["section"] == "3.2 Sick leave" and "medical certificate" in by_number["text"]
    by_title = selectors.get_document_section(
        user_id=alice.id, document=ids["취업규칙.txt"], section="육아휴직"
    )
    assert by_title["section"] == "제7조(육아휴직)"
    article = selectors.get_document_section(user_id=alice.id, document="취업규칙", section="제3조")
    assert article["section"] == "제3조(근로시간)"
    assert (
        selectors.get_document_section(user_id=alice.id, document="취업규칙", section="3조")[
            "section"
        ]
        == "제3조(근로시간)"
    )
    # A chapter includes its subsections.
    chapter = selectors.get_document_section(user_id=alice.id, document="handbook en", section="3")
    assert chapter["section"] == "3. Leave" and "Public holidays" in chapter["text"]
    assert selectors.get_document_section(user_id=alice.id, document="nope", section="3") is None
    assert (
        selectors.get_document_section(user_id=alice.id, document="handbook en", section="99")
        is None
    )
    assert (
        selectors.get_document_section(user_id=bob.id, document="handbook en", section="3.2")
        is None
    )


@pytest.mark.django_db(transaction=True)
async def test_async_twins(alice, close_db_threads):
    from asgiref.sync import sync_to_async

    await sync_to_async(upload_corpus)(alice)
    assert await selectors.auser_has_documents(alice.id)
    found = await selectors.aget_document_section(
        user_id=alice.id, document="handbook en", section="Payroll"
    )
    assert found["section"] == "7.1 Payroll"
