"""Reads of the knowledge base, always scoped to one user."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, TypedDict

from asgiref.sync import sync_to_async
from django.db.models import Count, Q, QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from core.db_async import db_async
from core.errors import NotFound
from core.ids import parse_uuid

from . import embeddings
from .chunking import Section, split_sections
from .models import Document, DocumentChunk

NOT_FOUND_MESSAGE = gettext_noop("Document not found.")
SECTION_TEXT_CHARS = 8000
NUMBER = re.compile(r"\d+(?:\.\d+)*")


class SectionView(TypedDict):
    document_id: str
    document_title: str
    section: str
    section_number: str
    section_title: str
    text: str


def _user_id(user: Any) -> Any:
    if user is None:
        return None
    if hasattr(user, "is_authenticated"):
        return user.pk if user.is_authenticated else None
    return user


def list_documents(*, user: Any) -> QuerySet[Document]:
    """Return the user's documents, newest first (without their text), each with how many
    of its chunks are embedded already (`indexed_count`: the worker's progress)."""
    indexed = Count("chunks", filter=Q(chunks__embedding_model=embeddings.model_id()))
    found = Document.objects.filter(owner_id=_user_id(user), scope__isnull=True)
    return found.defer("text").annotate(indexed_count=indexed)


def indexed_count(document: Document) -> int:
    """How many of the document's chunks are embedded already (searchable by meaning)."""
    if hasattr(document, "indexed_count"):
        return document.indexed_count
    chunks = DocumentChunk.objects.filter(document_id=document.pk)
    return chunks.filter(embedding_model=embeddings.model_id()).count()


def get_document_for_user(*, user: Any, document_id: Any) -> Document:
    """Return the user's document; someone else's answers exactly like a missing one."""
    pk, owner = parse_uuid(document_id), _user_id(user)
    if pk is None or owner is None:
        raise NotFound(_(NOT_FOUND_MESSAGE))
    try:
        return Document.objects.get(pk=pk, owner_id=owner)
    except Document.DoesNotExist:
        raise NotFound(_(NOT_FOUND_MESSAGE)) from None


def in_scope(scope: Any = None, documents: Collection[str] | None = None, *, on: str = "") -> Q:
    """Documents (or chunks) searched in conversation `scope`: the user's knowledge base
    and what was attached in that conversation (None: the knowledge base only). With
    `documents` (ids: a preset's chosen ones), those instead of the knowledge base;
    `on` names the document's id field ("pk" for documents, else a chunk's)."""
    if documents is None:
        found = Q(scope__isnull=True)
    else:
        found = Q(**{f"{on or 'document_id'}__in": list(documents)})
    return found | Q(scope=scope) if scope is not None else found


def user_has_documents(
    user_id: Any, scope: Any = None, documents: Collection[str] | None = None
) -> bool:
    """Say whether the user has any document to search (in conversation `scope`, among
    `documents` when given)."""
    owner = _user_id(user_id)
    chunks = DocumentChunk.objects.filter(in_scope(scope, documents), owner_id=owner)
    return owner is not None and chunks.exists()


auser_has_documents = sync_to_async(user_has_documents)


def list_sections(document: Document) -> list[dict[str, Any]]:
    """Return a document's sections with their text, for the preview."""
    return [
        {
            "index": s.index,
            "level": s.level,
            "heading": s.heading,
            "number": s.number,
            "title": s.title,
            "text": document.text[s.body_start : s.end].strip(),
        }
        for s in split_sections(document.text)
        if s.heading or document.text[s.body_start : s.end].strip()
    ]


def count_chunks_by_section(document: Document) -> dict[int, int]:
    """Return how many chunks each section of a document has."""
    counts: dict[int, int] = {}
    for index in DocumentChunk.objects.filter(document=document).values_list(
        "section_index", flat=True
    ):
        counts[index] = counts.get(index, 0) + 1
    return counts


def find_document(
    *, user_id: Any, document: str, scope: Any = None, documents: Collection[str] | None = None
) -> Document | None:
    """Return the user's document named by id or title (exact, then partial match)."""
    owned = Document.objects.filter(in_scope(scope, documents, on="pk"), owner_id=_user_id(user_id))
    pk = parse_uuid(document)
    if pk is not None:
        return owned.filter(pk=pk).first()
    name = " ".join(str(document or "").split())
    if not name:
        return None
    return (
        owned.filter(title__iexact=name).first()
        or owned.filter(filename__iexact=name).first()
        or owned.filter(title__icontains=name).first()
    )


def _normalize_number(value: str) -> str:
    """Return a section number's digits ('제3조' → '3', 'Section 3.2.' → '3.2')."""
    match = NUMBER.search(value or "")
    return match.group(0) if match else ""


def _section_end(sections: list[Section], found: Section) -> int:
    # A section includes its subsections: it runs to the next heading at its level or above.
    for later in sections[found.index + 1 :]:
        if later.level and later.level <= found.level:
            return later.start
    return sections[-1].end


def match_section(sections: list[Section], wanted: str) -> Section | None:
    """Return the section named by number ('3.2', '제3조') or title ('Leave policy')."""
    wanted = " ".join((wanted or "").split())
    if not wanted:
        return None
    headed = [s for s in sections if s.heading]
    lowered = wanted.lower()
    for s in headed:
        if lowered in {s.heading.lower(), s.number.lower(), s.title.lower()}:
            return s
    number = _normalize_number(wanted)
    if number and NUMBER.fullmatch(number):
        kind = "조" if "조" in wanted else ("장" if "장" in wanted else "")
        same = [s for s in headed if _normalize_number(s.number) == number]
        if kind:
            same = [s for s in same if s.number.endswith(kind)] or same
        if same:
            return same[0]
    partial = [s for s in headed if lowered in s.heading.lower()]
    return partial[0] if partial else None


def get_document_section(
    *,
    user_id: Any,
    document: str,
    section: str,
    scope: Any = None,
    documents: Collection[str] | None = None,
) -> SectionView | None:
    """Return one section of the user's document, by section number or title; None if absent."""
    found_document = find_document(
        user_id=user_id, document=document, scope=scope, documents=documents
    )
    if found_document is None:
        return None
    sections = split_sections(found_document.text)
    found = match_section(sections, section)
    if found is None:
        return None
    text = found_document.text[found.body_start : _section_end(sections, found)].strip()
    return {
        "document_id": str(found_document.id),
        "document_title": found_document.title,
        "section": found.heading,
        "section_number": found.number,
        "section_title": found.title,
        "text": text[:SECTION_TEXT_CHARS],
    }


aget_document_section = db_async(get_document_section, close_serial=False)
