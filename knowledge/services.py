"""Writes to the knowledge base: add a document (extract, split, index) and delete one."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from core.errors import Invalid, TooLarge
from text.words import index_terms

from . import tasks, vectors
from .chunking import chunk_sections, split_sections
from .extraction import extract_text, kind_for
from .models import TITLE_MAX_LENGTH, Document, DocumentChunk
from .selectors import get_document_for_user

MAX_FILENAME_CHARS = 255


def check_upload(*, filename: str, size: int) -> None:
    """Refuse a file by its name and size before reading it."""
    if not filename:
        raise Invalid(_("Choose a file to upload."), code="empty_file")
    kind_for(filename, settings.KNOWLEDGE_ALLOWED_EXTENSIONS)
    limit = settings.KNOWLEDGE_MAX_UPLOAD_BYTES
    if size > limit:
        raise TooLarge(
            _("The file is larger than %(size)s MB.") % {"size": limit // (1024 * 1024) or limit}
        )
    if size == 0:
        raise Invalid(_("The file is empty."), code="empty_file")


def build_chunks(document: Document) -> list[DocumentChunk]:
    """Return the unsaved chunks of a document's text (sections respected, overlapping)."""
    sections = split_sections(document.text)
    drafts = chunk_sections(
        document.text,
        sections,
        size=settings.KNOWLEDGE_CHUNK_CHARS,
        overlap=settings.KNOWLEDGE_CHUNK_OVERLAP,
    )
    document.section_count = sum(1 for s in sections if s.heading or s.end > s.body_start)
    document.chunk_count = len(drafts)
    return [
        DocumentChunk(
            document=document,
            owner_id=document.owner_id,
            scope=document.scope,
            ordinal=draft.ordinal,
            section_index=draft.section.index,
            section_number=draft.section.number[:40],
            section_title=draft.section.title[:300],
            heading=draft.section.heading[:400],
            text=draft.text,
            terms=index_terms(f"{draft.section.heading}\n{draft.text}"),
            start=draft.start,
            end=draft.end,
        )
        for draft in drafts
    ]


def upload_document(
    *, user: Any, filename: str, data: bytes, title: str = "", scope: Any = None
) -> Document:
    """Store a document and its chunks, or refuse the file and store nothing; `scope` (a
    conversation id) makes it searchable in that conversation only."""
    filename = PurePath(filename or "").name[:MAX_FILENAME_CHARS]
    check_upload(filename=filename, size=len(data))
    extracted = extract_text(
        filename=filename, data=data, allowed=settings.KNOWLEDGE_ALLOWED_EXTENSIONS
    )
    title = " ".join((title or "").split())[:TITLE_MAX_LENGTH] or _title_for(filename)
    if "\x00" in title:
        raise Invalid(_("The title must not contain NUL characters."))
    document = Document(
        owner=user,
        title=title,
        filename=filename,
        kind=extracted.kind,
        size_bytes=len(data),
        text=extracted.text,
        scope=scope,
    )
    chunks = build_chunks(document)
    if not chunks:
        raise Invalid(_("The file contains no text to search."), code="empty_file")
    with transaction.atomic():
        document.save()
        DocumentChunk.objects.bulk_create(chunks, batch_size=500)
        tasks.embed_later(document.id, document.owner_id)
    return document


def _title_for(filename: str) -> str:
    return PurePath(filename).stem.replace("_", " ").strip()[:TITLE_MAX_LENGTH] or filename


def delete_document(*, user: Any, document_id: Any) -> None:
    """Delete one of the user's documents and its chunks (someone else's is not found)."""
    document = get_document_for_user(user=user, document_id=document_id)
    with transaction.atomic():
        document.delete()
        transaction.on_commit(lambda: vectors.forget(user.pk))
