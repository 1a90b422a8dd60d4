"""Endpoints that move conversations in and out as files: import, export, and the bulk
actions (archive and delete are conversations.bulk's; export writes the zip)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import IO, Any, Literal

from django.conf import settings
from django.http import FileResponse, HttpRequest, StreamingHttpResponse
from django.utils.translation import gettext as _
from ninja import Field, Router, Schema, Status

from conversations import bulk, selectors
from conversations.api.schemas import BulkIn, BulkOut, ConversationOut
from conversations.serializers import conversation_to_dict
from core.errors import NotFound, TooLarge
from core.schemas import Input, errors
from core.streaming import astream, attachment_header

from . import export_jobs, exports, import_jobs, imports
from .models import ExportJob, ImportJob

router = Router(tags=["conversations"])
ERRORS = errors(400, 401, 404, 409, 413, 422, 429)
FILE_RESPONSE = {
    "description": "the file, as an attachment",
    "content": {
        "text/markdown": {"schema": {"type": "string"}},
        "application/json": {"schema": {"type": "object"}},
        "text/plain": {"schema": {"type": "string"}},
        "application/zip": {"schema": {"type": "string", "format": "binary"}},
        "application/pdf": {"schema": {"type": "string", "format": "binary"}},
        "text/csv": {"schema": {"type": "string"}},
    },
}


def _owned(request: HttpRequest, conversation_id: str) -> Any:
    return selectors.get_conversation_for_user(user=request.auth, conversation_id=conversation_id)


class SkippedOut(Schema):
    index: int = Field(..., description="its place in the file, from 0")
    title: str
    reason: str


class ImportedPage(Schema):
    items: list[ConversationOut]
    next_cursor: str | None = None
    skipped: list[SkippedOut] = Field(
        default_factory=list, description="conversations of the file not imported (≤ 1,000)"
    )


class ImportJobOut(Schema):
    id: str
    status: Literal["pending", "running", "ready", "failed"]
    size_bytes: int = Field(description="the uploaded file's size")
    imported_count: int
    skipped_count: int = Field(description="all of them; `skipped` lists at most 1,000")
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    items: list[ConversationOut] | None = Field(
        description="when ready: the imported conversations (those still there)"
    )
    skipped: list[SkippedOut] | None = Field(
        description="when ready: conversations of the file not imported"
    )
    error_code: str | None = Field(
        description="when failed: invalid_import, too_long (as the 400/413 would say),"
        " interrupted or failed"
    )
    error: str | None

    @classmethod
    def of(cls, job: ImportJob, items: list[dict[str, Any]] | None = None) -> ImportJobOut:
        ready = job.status == ImportJob.Status.READY
        fields = {name: getattr(job, name) for name in cls.model_fields if hasattr(job, name)}
        return cls(
            **fields
            | {
                "id": str(job.pk),
                "items": items if ready else None,
                "skipped": job.skipped if ready else None,
                "error_code": job.error_code or None,
                "error": job.error or None,
            }
        )


@router.post(
    "/conversations/import",
    response={201: ConversationOut | ImportedPage, 202: ImportJobOut, **ERRORS},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": imports.export_file_schema()},
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"file": {"type": "string", "format": "binary"}},
                        "required": ["file"],
                    }
                },
            },
        }
    },
)
def import_conversation(request: HttpRequest):
    """Import conversations: this app's JSON export, or ChatGPT's data export
    (`conversations.json` or its zip), Claude's, Open WebUI's or LibreChat's, told apart by
    their content (raw body, or a multipart `file`).

    This app's export answers the new conversation; another app's file answers
    `{"items": [...]}`, one per conversation it held. Anything a row cannot hold (times
    outside years 1–9999 in UTC, non-finite numbers, NUL, lone surrogates, unknown fields)
    answers 400 `invalid_import` naming the field, and nothing is stored.

    A file larger than `CHAT_IMPORT_INLINE_BYTES` is imported in the background: 202 and
    the job; ask `GET /imports/{id}` until it is ready (its `items` and `skipped`) or failed
    (its `error_code` and `error`). One at a time (409).
    """
    with _import_source(request) as source:
        source.seek(0, os.SEEK_END)
        size = source.tell()
        source.seek(0)
        if size > settings.CHAT_IMPORT_INLINE_BYTES:
            job = import_jobs.start_import(user=request.auth, source=source, size=size)
            return Status(202, ImportJobOut.of(job))
        imported = imports.import_file(user=request.auth, source=source)
    if imported.format == "chatsite" and len(imported.conversations) == 1 and not imported.skipped:
        return Status(201, conversation_to_dict(imported.conversations[0]))
    items = [conversation_to_dict(c) for c in imported.conversations]
    skipped = [s.as_dict() for s in imported.skipped]
    return Status(201, {"items": items, "next_cursor": None, "skipped": skipped})


@router.get("/imports/{job_id}", response={200: ImportJobOut, **ERRORS}, tags=["imports"])
def get_import(request: HttpRequest, job_id: str):
    """A large import's status and, when ready, the conversations it made and those it
    left out."""
    job = import_jobs.get_import(user=request.auth, job_id=job_id)
    items = None
    if job.status == ImportJob.Status.READY:
        conversations = import_jobs.imported_conversations(user=request.auth, job=job)
        items = [conversation_to_dict(c) for c in conversations]
    return ImportJobOut.of(job, items)


@contextmanager
def _import_source(request: HttpRequest) -> Iterator[IO[bytes]]:
    """Yield the uploaded file (multipart `file`) or the body, as a seekable file that is
    never wholly in memory."""
    if request.content_type.startswith("multipart/"):
        upload = request.FILES.get("file")
        if upload is None:
            raise imports.InvalidImport("file: send the export as the multipart field `file`.")
        if upload.size is not None and upload.size > imports.max_import_file_bytes():
            raise TooLarge(
                _("The file is larger than %(limit)s bytes.")
                % {"limit": imports.max_import_file_bytes()}
            )
        with upload.open("rb") as file:
            yield file
        return
    limit = imports.max_import_file_bytes()
    with tempfile.SpooledTemporaryFile(max_size=1024 * 1024) as spool:
        copied = 0
        while chunk := request.read(1024 * 1024):
            copied += len(chunk)
            if copied > limit:
                raise TooLarge(_("The file is larger than %(limit)s bytes.") % {"limit": limit})
            spool.write(chunk)
        spool.seek(0)
        yield spool


@router.post(
    "/conversations/bulk",
    response={200: BulkOut, **ERRORS},
    openapi_extra={"responses": {"200": FILE_RESPONSE}},
)
def bulk_action(request: HttpRequest, payload: BulkIn):
    """Archive, delete or export (zip) several conversations; all must be the user's."""
    if payload.action == "archive":
        count = bulk.archive_conversations(user=request.auth, ids=payload.ids)
    elif payload.action == "delete":
        count = bulk.delete_conversations(user=request.auth, ids=payload.ids)
    else:
        rows = bulk.get_selected_conversations(user=request.auth, ids=payload.ids)
        response = StreamingHttpResponse(
            astream(
                lambda: exports.iter_zip(
                    rows, payload.format, include_metadata=payload.include_metadata
                )
            ),
            content_type="application/zip",
        )
        response["Content-Disposition"] = attachment_header("conversations.zip")
        return response
    return {"action": payload.action, "count": count}


@router.get(
    "/conversations/{conversation_id}/export",
    response={200: None, **ERRORS},
    openapi_extra={"responses": {"200": FILE_RESPONSE}},
)
def export_conversation(
    request: HttpRequest,
    conversation_id: str,
    format: exports.ExportFormat = "markdown",
    include_metadata: bool = False,
):
    """Download the conversation as Markdown, JSON, text, CSV or PDF."""
    return export_response(_owned(request, conversation_id), format, include_metadata)


def export_response(conversation: Any, fmt: str, include_metadata: bool) -> StreamingHttpResponse:
    """Stream an export as an attachment named after the title and date."""
    response = StreamingHttpResponse(
        astream(lambda: exports.iter_export(conversation, fmt, include_metadata=include_metadata)),
        content_type=exports.content_type(fmt),
    )
    response["Content-Disposition"] = attachment_header(exports.export_filename(conversation, fmt))
    return response


class ExportJobIn(Input):
    format: Literal["markdown-zip"]
    include_metadata: bool = Field(False, strict=True)


class ExportJobOut(Schema):
    id: str
    status: Literal["pending", "running", "ready", "failed"]
    format: str
    conversation_count: int
    size_bytes: int
    created_at: datetime
    finished_at: datetime | None
    download_url: str | None = Field(description="when ready: the zip, for a day")
    error: str | None

    @classmethod
    def of(cls, job: ExportJob) -> ExportJobOut:
        ready = job.status == ExportJob.Status.READY
        fields = {name: getattr(job, name) for name in cls.model_fields if hasattr(job, name)}
        return cls(
            **fields
            | {
                "id": str(job.pk),
                "download_url": f"/api/v1/exports/{job.pk}/download" if ready else None,
                "error": job.error or None,
            }
        )


@router.post("/exports", response={202: ExportJobOut, **ERRORS}, tags=["exports"])
def start_export(request: HttpRequest, payload: ExportJobIn):
    """Write all your conversations (not temporary ones) as Markdown files in a zip, in the
    background; ask `GET /exports/{id}` until it is ready. One at a time (409)."""
    job = export_jobs.start_export(
        user=request.auth, format=payload.format, include_metadata=payload.include_metadata
    )
    return Status(202, ExportJobOut.of(job))


@router.get("/exports/{job_id}", response={200: ExportJobOut, **ERRORS}, tags=["exports"])
def get_export(request: HttpRequest, job_id: str):
    """The export's status and, when ready, where to download it."""
    return ExportJobOut.of(export_jobs.get_export(user=request.auth, job_id=job_id))


@router.get(
    "/exports/{job_id}/download",
    response={200: None, **ERRORS},
    openapi_extra={"responses": {"200": FILE_RESPONSE}},
    tags=["exports"],
)
def download_export(request: HttpRequest, job_id: str):
    """The ready export's zip (404 before it is ready, and after a day)."""
    job = export_jobs.get_export(user=request.auth, job_id=job_id)
    if job.status != ExportJob.Status.READY or not job.file:
        raise NotFound(_("This export is not ready."))
    response = FileResponse(job.file.open("rb"), content_type="application/zip")
    response["Content-Disposition"] = attachment_header(export_jobs.zip_name(job))
    return response
