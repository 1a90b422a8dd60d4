"""The knowledge base's JSON endpoints (a django-ninja Router, mounted on the /api/v1/ API)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import File, Form, Query, Router, Schema, Status
from ninja.files import UploadedFile
from pydantic import Field

from core.pagination import KeyField, SortKey, paginate
from core.schemas import Text, errors

from . import selectors, services
from .hybrid import retrieve
from .models import Document

router = Router(tags=["documents"])
CURSOR_KEY = "documents"
NEWEST_FIRST = SortKey((KeyField("created_at", datetime),), descending=True)


ERRORS = errors(400, 401, 404, 413, 422, 429)


class DocumentOut(Schema):
    id: str
    title: str
    filename: str
    kind: str
    size_bytes: int
    section_count: int
    chunk_count: int
    indexed_chunks: int = Field(description="chunks searchable by meaning yet (of chunk_count)")
    created_at: datetime


class SectionOut(Schema):
    index: int
    level: int
    heading: str
    number: str
    title: str
    text: str


class DocumentDetailOut(DocumentOut):
    sections: list[SectionOut]


class DocumentPage(Schema):
    items: list[DocumentOut]
    next_cursor: str | None


class DocumentFilters(Schema):
    limit: int = Field(50, ge=1, le=200)
    cursor: Text | None = Field(None, max_length=1000)


class SearchFilters(Schema):
    q: Text = Field(..., min_length=1, max_length=500)
    k: int = Field(4, ge=1, le=20)


class HitOut(Schema):
    document_id: str
    document_title: str
    section: str
    snippet: str
    score: float
    text: str


class HitPage(Schema):
    items: list[HitOut]


def _document(document: Document) -> dict[str, Any]:
    return {
        "id": str(document.id),
        "title": document.title,
        "filename": document.filename,
        "kind": document.kind,
        "size_bytes": document.size_bytes,
        "section_count": document.section_count,
        "chunk_count": document.chunk_count,
        "indexed_chunks": selectors.indexed_count(document),
        "created_at": document.created_at,
    }


@router.get("/documents", response={200: DocumentPage, **ERRORS})
def list_documents(request: HttpRequest, filters: Query[DocumentFilters]):
    """List the user's documents, newest first."""
    page = paginate(
        selectors.list_documents(user=request.auth),
        sort=NEWEST_FIRST,
        cursor=filters.cursor,
        limit=filters.limit,
        key=CURSOR_KEY,
    )
    return {"items": [_document(d) for d in page.items], "next_cursor": page.next_cursor}


@router.post("/documents", response={201: DocumentOut, **ERRORS})
def upload_document(request: HttpRequest, file: File[UploadedFile], title: Form[str] = ""):
    """Upload a .txt, .md or .pdf document; it is split into sections and indexed."""
    services.check_upload(filename=file.name or "", size=file.size or 0)
    document = services.upload_document(
        user=request.auth, filename=file.name or "", data=file.read(), title=title
    )
    return Status(201, _document(document))


@router.get("/documents/{uuid:document_id}", response={200: DocumentDetailOut, **ERRORS})
def get_document(request: HttpRequest, document_id: str):
    """Read a document with its sections."""
    document = selectors.get_document_for_user(user=request.auth, document_id=document_id)
    return _document(document) | {"sections": selectors.list_sections(document)}


@router.delete("/documents/{uuid:document_id}", response={204: None, **ERRORS})
def delete_document(request: HttpRequest, document_id: str):
    """Delete a document and its chunks."""
    services.delete_document(user=request.auth, document_id=document_id)
    return Status(204, None)


@router.get("/search/documents", response={200: HitPage, **ERRORS})
def search_documents(request: HttpRequest, filters: Query[SearchFilters]):
    """Search the user's documents: best passages first, with section and score."""
    return {"items": retrieve(user_id=request.auth.pk, query=filters.q, k=filters.k)}
