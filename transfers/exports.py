"""Export a conversation as Markdown, JSON, plain text, CSV or PDF.

Rows are read `BATCH` at a time by sequence number and turned into text as they come,
so memory stays flat however long the conversation is (the PDF alone is built whole:
transfers/pdf.py). The JSON form is the one `imports.import_conversation` reads back.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
import zipfile
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any, Literal

from django.utils import timezone

from conversations.models import (
    MESSAGE_RECORD_FIELDS,
    Attachment,
    Conversation,
    Message,
    MessageFeedback,
    metadata_says_estimated,
)
from conversations.schemas import as_json
from conversations.serializers import attachment_to_dict
from conversations.tree import Tree, current_branch

from .export_format import EXPORT_FORMAT, EXPORT_VERSION, ExportedConversation, ExportedMessage

ExportFormat = Literal["markdown", "json", "text", "csv", "pdf"]
FORMATS: dict[str, tuple[str, str]] = {
    "markdown": ("md", "text/markdown; charset=utf-8"),
    "json": ("json", "application/json; charset=utf-8"),
    "text": ("txt", "text/plain; charset=utf-8"),
    "csv": ("csv", "text/csv; charset=utf-8"),
    "pdf": ("pdf", "application/pdf"),
}
CSV_COLUMNS = ("sequence_number", "role", "created_at", "model", "tokens", "content")
# A cell starting with one of these is a formula to a spreadsheet (CSV injection): it is
# written with a leading apostrophe, which spreadsheets show as text and do not print.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
BATCH = 1000
MESSAGE_FIELDS = ("id", *MESSAGE_RECORD_FIELDS, "created_at", "parent_id")
ROLE_LABELS = {"user": "User", "assistant": "Assistant", "system": "System"}


def iter_message_rows(
    conversation_id: Any,
    *,
    among: list[Any] | None = None,
    batch: int = BATCH,
    feedback_of: Any = None,
) -> Iterator[dict[str, Any]]:
    """Yield a conversation's messages (or those `among` some ids, oldest first: a branch,
    root first) as dicts, `batch` rows per query; with `feedback_of` (a user id), each
    carries that user's `feedback` ({rating, comment} or None)."""
    if among is not None:  # a branch: its ids a batch at a time (never all in one query)
        for start in range(0, len(among), batch):
            chunk = Message.objects.filter(
                conversation_id=conversation_id, pk__in=among[start : start + batch]
            )
            yield from _rows(chunk, feedback_of)
        return
    after = 0
    while True:
        rows = _rows(
            Message.objects.filter(conversation_id=conversation_id, sequence_number__gt=after),
            feedback_of,
            limit=batch,
        )
        yield from rows
        if len(rows) < batch:
            return
        after = rows[-1]["sequence_number"]


def _rows(messages: Any, feedback_of: Any, *, limit: int | None = None) -> list[dict[str, Any]]:
    """The rows of `messages` by sequence number (at most `limit`), with their attachments
    and, with `feedback_of`, that user's rating of each."""
    ordered = messages.order_by("sequence_number").values(*MESSAGE_FIELDS)
    rows = list(ordered[:limit] if limit is not None else ordered)
    if rows:
        _add_attachments(rows)
    if feedback_of is not None and rows:
        found = {
            f["message_id"]: {"rating": f["rating"], "comment": f["comment"]}
            for f in MessageFeedback.objects.filter(
                user_id=feedback_of, message_id__in=[r["id"] for r in rows]
            ).values("message_id", "rating", "comment")
        }
        for row in rows:
            row["feedback"] = found.get(row["id"])
    return rows


def _add_attachments(rows: list[dict[str, Any]]) -> None:
    """Give each row `attachments`: its files' metadata (never the bytes), one query."""
    found: dict[Any, list[dict[str, Any]]] = {}
    files = Attachment.objects.filter(message_id__in=[r["id"] for r in rows]).order_by(
        "created_at", "id"
    )
    for attachment in files:
        found.setdefault(attachment.message_id, []).append(
            {**attachment_to_dict(attachment), "file": attachment.file.name}
        )
    for row in rows:
        row["attachments"] = found.get(row["id"], [])


def export_filename(conversation: Conversation, fmt: str, *, today: datetime | None = None) -> str:
    """Return "<title>-<YYYY-MM-DD>.<ext>", the title kept readable (Korean included)."""
    # Bidi controls (U+202E can make "exe.txt" read as "txt.exe") and other invisible
    # format characters go too.
    title = "".join(
        c for c in conversation.title or "conversation" if unicodedata.category(c) != "Cf"
    )
    title = re.sub(r"[\\/:*?\"<>|\x00-\x1f\x7f]+", " ", title)
    title = re.sub(r"\s+", "-", title.strip())[:80].strip("-.") or "conversation"
    day = (today or timezone.localtime()).date().isoformat()
    return f"{title}-{day}.{FORMATS[fmt][0]}"


def content_type(fmt: str) -> str:
    """Return the MIME type of an export format."""
    return FORMATS[fmt][1]


def iter_export(
    conversation: Conversation, fmt: ExportFormat, *, include_metadata: bool = False
) -> Iterator[str | bytes]:
    """Yield the export of `conversation` in `fmt` as chunks (text, or the PDF's bytes):
    JSON carries the whole tree (every branch, `parent_id`), the others the current branch."""
    # With metadata, each message carries the owner's rating.
    owner = conversation.created_by_id if include_metadata else None
    if fmt == "json":
        rows = iter_message_rows(conversation.id, feedback_of=owner)
        return _iter_json(conversation, rows, include_metadata)
    tree = Tree.of(conversation.pk)
    path = current_branch(conversation, tree)
    rows = iter_message_rows(conversation.id, among=path, feedback_of=owner)
    if fmt == "markdown":
        return _iter_markdown(conversation, rows, include_metadata)
    if fmt == "csv":
        return _iter_csv(rows)
    if fmt == "pdf":
        from .pdf import build_pdf  # fpdf2 and fontTools load on the first PDF only

        return iter([build_pdf(conversation, rows)])
    return _iter_text(conversation, rows, include_metadata)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _iter_json(
    conversation: Conversation, rows: Iterable[dict[str, Any]], include_metadata: bool
) -> Iterator[str]:
    head = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": timezone.now().isoformat(),
        "include_metadata": include_metadata,
        "conversation": ExportedConversation.of(conversation, include_metadata=include_metadata),
    }
    yield _dumps(head)[:-1] + ',"messages":['
    for index, row in enumerate(rows):
        yield (
            ("," if index else "")
            + "\n"
            + _dumps(ExportedMessage.of(row, include_metadata=include_metadata))
        )
    yield "\n]}\n"


def _iter_markdown(
    conversation: Conversation, rows: Iterable[dict[str, Any]], include_metadata: bool
) -> Iterator[str]:
    yield f"# {conversation.title or 'Conversation'}\n\n"
    if conversation.description:
        yield f"{conversation.description}\n\n"
    if include_metadata:
        yield (
            f"- Created: {as_json(conversation.created_at)}\n- Status: {conversation.status}\n"
            f"- Messages: {conversation.message_count}\n"
            f"- Tokens: {conversation.total_tokens_used}\n\n"
        )
    if conversation.summary:
        yield f"## Summary\n\n{conversation.summary}\n\n"
    yield "---\n\n"
    for row in rows:
        label = ROLE_LABELS.get(row["role"], row["role"])
        yield f"### {label} · {as_json(row['created_at'])}\n\n{row['content']}\n\n"
        if row.get("attachments"):
            names = ", ".join(a["name"] for a in row["attachments"])
            yield f"*Attachments: {names}*\n\n"
        if include_metadata:
            yield _markdown_metadata(row)


def _markdown_metadata(row: dict[str, Any]) -> str:
    details = [f"#{row['sequence_number']}"]
    if row["model"]:
        details.append(f"model {row['model']}")
    if row["tokens_used"]:
        details.append(_tokens(row))
    if row["finish_reason"]:
        details.append(f"finish {row['finish_reason']}")
    if row.get("feedback"):
        rated = row["feedback"]
        details.append(
            f"rated {rated['rating']}" + (f": {rated['comment']}" if rated["comment"] else "")
        )
    text = f"<sub>{' · '.join(details)}</sub>\n\n"
    for part in row["parts"] or []:
        if isinstance(part, dict):
            text += f"<details><summary>{part.get('type', 'part')}</summary>\n\n```json\n"
            text += json.dumps(part, ensure_ascii=False, indent=2) + "\n```\n</details>\n\n"
    return text


def _tokens(row: dict[str, Any]) -> str:
    """Return "N tokens", or "≈ N tokens" when the count is our estimate."""
    mark = "≈ " if metadata_says_estimated(row["metadata"]) else ""
    return f"{mark}{row['tokens_used']} tokens"


def _iter_text(
    conversation: Conversation, rows: Iterable[dict[str, Any]], include_metadata: bool
) -> Iterator[str]:
    yield f"{conversation.title or 'Conversation'}\n{'=' * 40}\n\n"
    if include_metadata:
        yield (
            f"Created: {as_json(conversation.created_at)}  Status: {conversation.status}  "
            f"Messages: {conversation.message_count}  Tokens: {conversation.total_tokens_used}\n\n"
        )
    if conversation.summary:
        yield f"Summary:\n{conversation.summary}\n\n"
    for row in rows:
        stamp = row["created_at"].strftime("%Y-%m-%d %H:%M:%S") if row["created_at"] else ""
        extra = ""
        if include_metadata and row["model"]:
            extra = f" ({row['model']}, {_tokens(row)})"
        yield f"[{stamp}] {row['role']}{extra}:\n{row['content']}\n\n"


def _iter_csv(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """One row per message (CSV_COLUMNS), after a byte-order mark so that spreadsheets
    read the text as UTF-8 (Korean included)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    yield "\ufeff" + buffer.getvalue()
    for row in rows:
        buffer.seek(0)
        buffer.truncate()
        content = row["content"] or ""
        writer.writerow(
            (
                row["sequence_number"],
                row["role"],
                as_json(row["created_at"]),
                row["model"] or "",
                row["tokens_used"] or 0,
                "'" + content if content.startswith(FORMULA_START) else content,
            )
        )
        yield buffer.getvalue()


class _Sink:
    """A write-only file for zipfile whose written bytes are drained as they come."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.position = 0

    def write(self, data: bytes) -> int:
        self.chunks.append(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        return None

    def drain(self) -> bytes:
        data, self.chunks = b"".join(self.chunks), []
        return data


def iter_zip(
    conversations: Iterable[Conversation],
    fmt: ExportFormat,
    *,
    include_metadata: bool = False,
    extras: Iterable[tuple[str, bytes]] = (),
) -> Iterator[bytes]:
    """Yield a zip archive holding one export file per conversation, streamed (`extras`:
    more files, (name, bytes), at the end)."""
    sink = _Sink()
    names: set[str] = set()
    with zipfile.ZipFile(sink, mode="w", compression=zipfile.ZIP_DEFLATED) as archive:
        for conversation in conversations:
            name = export_filename(conversation, fmt)
            if name in names:
                name = f"{conversation.id}-{name}"
            names.add(name)
            with archive.open(name, mode="w", force_zip64=True) as entry:
                for chunk in iter_export(conversation, fmt, include_metadata=include_metadata):
                    entry.write(chunk.encode() if isinstance(chunk, str) else chunk)
                    if sink.position and len(sink.chunks) > 16:
                        yield sink.drain()
            yield sink.drain()
            # The files sent in it, beside the export: "<export>.files/<n>-<name>".
            sent = Attachment.objects.filter(conversation=conversation, message__isnull=False)
            for index, attachment in enumerate(sent.order_by("created_at", "id"), start=1):
                path = f"{name.rsplit('.', 1)[0]}.files/{index}-{attachment.name}"
                with (
                    attachment.file.open("rb") as source,
                    archive.open(path, mode="w", force_zip64=True) as entry,
                ):
                    while block := source.read(64 * 1024):
                        entry.write(block)
                        if len(sink.chunks) > 16:
                            yield sink.drain()
                yield sink.drain()
        for name, data in extras:
            archive.writestr(name, data)
    yield sink.drain()
