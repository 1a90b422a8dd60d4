"""Import a JSON export as a new conversation of the importer; refuse anything malformed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Case, DateTimeField, Value, When
from django.utils import timezone

from core.errors import ServiceError, TooLarge

from . import events
from .exports import EXPORT_FORMAT, EXPORT_VERSION
from .models import TITLE_MAX_LENGTH, Conversation, Message
from .services import DESCRIPTION_MAX_LENGTH, SERVICE_ID_MAX_LENGTH

MAX_MESSAGES = 100_000
MAX_CONTENT_CHARS = 1_000_000
MAX_PARTS = 200
BATCH = 1000


class InvalidImport(ServiceError):
    code = "invalid_import"
    status = 400


def max_import_bytes() -> int:
    """Return the largest accepted import file, in bytes."""
    return int(getattr(settings, "CHAT_IMPORT_MAX_BYTES", 64 * 1024 * 1024))


@dataclass
class _Row:
    role: str
    content: str
    parts: list[Any]
    created_at: datetime | None
    model: str
    tokens_used: int
    finish_reason: str
    metadata: dict[str, Any]
    sequence_number: int


def _refuse_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; PostgreSQL's jsonb refuses them.
    raise ValueError(f"{name} is not allowed")


def parse_export(raw: bytes | str) -> dict[str, Any]:
    """Decode an export file; refuse what is too large or not JSON."""
    if len(raw) > max_import_bytes():
        raise TooLarge(f"The file is larger than {max_import_bytes()} bytes.")
    try:
        data = json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise InvalidImport(f"The file is not valid JSON ({exc.__class__.__name__}).") from None
    if not isinstance(data, dict):
        raise InvalidImport("The file must hold a JSON object.")
    if data.get("format") != EXPORT_FORMAT:
        raise InvalidImport(f'"format" must be "{EXPORT_FORMAT}".')
    if data.get("version") != EXPORT_VERSION:
        raise InvalidImport(f"Unsupported version; this server reads version {EXPORT_VERSION}.")
    return data


def _text(value: Any, where: str, max_length: int, *, default: str = "") -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        raise InvalidImport(f"{where} must be a string.")
    if len(value) > max_length:
        raise InvalidImport(f"{where} is longer than {max_length} characters.")
    if _unstorable(value):
        raise InvalidImport(f"{where} contains a NUL character or invalid Unicode.")
    return value


def _time(value: Any, where: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidImport(f"{where} must be an ISO 8601 time.")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidImport(f"{where} is not an ISO 8601 time.") from None
    if timezone.is_naive(parsed):
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _unstorable(text: str) -> bool:
    # PostgreSQL text and jsonb refuse NUL and lone surrogates.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return "\x00" in text


def _has_bad_text(value: Any, depth: int = 0) -> bool:
    if depth > 50:
        raise InvalidImport("parts or metadata are nested too deeply.")
    if isinstance(value, str):
        return _unstorable(value)
    if isinstance(value, dict):
        return any(
            _has_bad_text(k, depth + 1) or _has_bad_text(v, depth + 1) for k, v in value.items()
        )
    if isinstance(value, list):
        return any(_has_bad_text(v, depth + 1) for v in value)
    return False


def _row(index: int, item: Any) -> _Row:
    where = f"messages[{index}]"
    if not isinstance(item, dict):
        raise InvalidImport(f"{where} must be an object.")
    role = item.get("role")
    if role not in Message.Role.values:
        raise InvalidImport(f"{where}.role must be one of: {', '.join(Message.Role.values)}.")
    seq = item.get("sequence_number")
    if isinstance(seq, bool) or not isinstance(seq, int) or not 1 <= seq <= 2**31 - 1:
        raise InvalidImport(f"{where}.sequence_number must be a positive whole number.")
    parts = item.get("parts", [])
    if not isinstance(parts, list) or len(parts) > MAX_PARTS:
        raise InvalidImport(f"{where}.parts must be a list of at most {MAX_PARTS} objects.")
    if not all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in parts):
        raise InvalidImport(f"{where}.parts must be objects with a string type.")
    metadata = item.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InvalidImport(f"{where}.metadata must be an object.")
    if _has_bad_text(parts) or _has_bad_text(metadata):
        raise InvalidImport(f"{where} contains a NUL character or invalid Unicode.")
    tokens = item.get("tokens_used") or 0
    if isinstance(tokens, bool) or not isinstance(tokens, int) or not 0 <= tokens <= 2**31 - 1:
        raise InvalidImport(f"{where}.tokens_used must be a whole number ≥ 0.")
    finish = item.get("finish_reason") or ""
    if finish and finish not in Message.FinishReason.values:
        raise InvalidImport(f"{where}.finish_reason is not a known finish reason.")
    return _Row(
        role=role,
        content=_text(item.get("content"), f"{where}.content", MAX_CONTENT_CHARS),
        parts=parts,
        created_at=_time(item.get("created_at"), f"{where}.created_at"),
        model=_text(item.get("model"), f"{where}.model", 100),
        tokens_used=tokens,
        finish_reason=finish,
        metadata=metadata,
        sequence_number=seq,
    )


def validate_export(data: dict[str, Any]) -> tuple[dict[str, Any], list[_Row]]:
    """Return the conversation fields and message rows of an export, or refuse it."""
    header = data.get("conversation")
    if not isinstance(header, dict):
        raise InvalidImport('"conversation" must be an object.')
    fields = {
        "title": " ".join(
            _text(header.get("title"), "conversation.title", TITLE_MAX_LENGTH).split()
        ),
        "description": _text(
            header.get("description"), "conversation.description", DESCRIPTION_MAX_LENGTH
        ),
        "service_id": _text(
            header.get("service_id"), "conversation.service_id", SERVICE_ID_MAX_LENGTH
        ),
        "summary": _text(header.get("summary"), "conversation.summary", MAX_CONTENT_CHARS),
        "summary_at": _time(header.get("summary_at"), "conversation.summary_at"),
    }
    items = data.get("messages")
    if not isinstance(items, list):
        raise InvalidImport('"messages" must be a list.')
    if len(items) > MAX_MESSAGES:
        raise TooLarge(f"An import holds at most {MAX_MESSAGES} messages.")
    rows = [_row(i, item) for i, item in enumerate(items)]
    seen: set[int] = set()
    for row in rows:
        if row.sequence_number in seen:
            raise InvalidImport(f"sequence_number {row.sequence_number} appears twice.")
        seen.add(row.sequence_number)
    rows.sort(key=lambda r: r.sequence_number)
    return fields, rows


@transaction.atomic
def import_conversation(*, user: Any, raw: bytes | str) -> Conversation:
    """Create the user's conversation from a JSON export; all or nothing."""
    fields, rows = validate_export(parse_export(raw))
    status = Conversation.Status.SUMMARIZED if fields["summary"] else Conversation.Status.ACTIVE
    conversation = Conversation.objects.create(created_by=user, status=status, **fields)
    now = timezone.now()
    for start in range(0, len(rows), BATCH):
        chunk = rows[start : start + BATCH]
        created = Message.objects.bulk_create(
            Message(
                conversation=conversation,
                role=row.role,
                content=row.content,
                parts=row.parts,
                model=row.model,
                tokens_used=row.tokens_used,
                finish_reason=row.finish_reason,
                metadata=row.metadata,
                # Renumbered 1..n in the file's order: sequence numbers are gap-free.
                sequence_number=start + offset + 1,
                created_by=user if row.role == Message.Role.USER else None,
            )
            for offset, row in enumerate(chunk)
        )
        # auto_now_add stamped "now"; put back the times the file gives.
        Message.objects.filter(pk__in=[m.pk for m in created]).update(
            created_at=Case(
                *[
                    When(pk=m.pk, then=Value(row.created_at or now))
                    for m, row in zip(created, chunk, strict=True)
                ],
                output_field=DateTimeField(),
            )
        )
    conversation.message_count = conversation.last_sequence_number = len(rows)
    conversation.total_tokens_used = sum(row.tokens_used for row in rows)
    conversation.last_message_at = max((row.created_at or now for row in rows), default=None)
    conversation.save(
        update_fields=[
            "message_count",
            "total_tokens_used",
            "last_message_at",
            "last_sequence_number",
        ]
    )
    events.send_on_commit(events.conversation_updated(conversation), user_id=user.pk)
    return conversation
