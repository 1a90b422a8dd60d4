"""The audit log as CSV, a row at a time (the admin's "Download CSV")."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet

from .models import AuditEntry

COLUMNS = (
    "created_at",
    "actor_id",
    "actor_name",
    "action",
    "target_type",
    "target_id",
    "target_repr",
    "detail",
)
CHUNK_ROWS = 2000
# A cell starting with one of these is a formula to a spreadsheet: quote it as text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class _Line:
    """A file-like that hands back what csv.writer writes."""

    def write(self, value: str) -> str:
        return value


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _row(entry: AuditEntry) -> list[str]:
    import json

    return [
        entry.created_at.isoformat(),
        _cell(entry.actor_id),
        _cell(entry.actor_name),
        entry.action,
        _cell(entry.target_type),
        _cell(entry.target_id),
        _cell(entry.target_repr),
        _cell(json.dumps(entry.detail, ensure_ascii=False, sort_keys=True)),
    ]


def iter_csv(queryset: QuerySet[AuditEntry]) -> Iterator[str]:
    """Yield the header and one CSV line per entry, reading the rows in chunks."""
    writer = csv.writer(_Line())
    yield "\ufeff" + writer.writerow(COLUMNS)  # the BOM: spreadsheets then read UTF-8
    for entry in queryset.iterator(chunk_size=CHUNK_ROWS):
        yield writer.writerow(_row(entry))
