"""The staff usage CSV: the same rows as the API's JSON, one line each."""

from __future__ import annotations

import csv
import io

from .selectors import Report

COLUMNS = ["input_tokens", "output_tokens", "total_tokens", "replies"]


def _cell(value: object) -> object:
    """Keep a spreadsheet from reading a name as a formula (`=`, `+`, `-`, `@` first)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def report_csv(report: Report) -> str:
    """Return the report as CSV text with a header line and a total line."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    keys = [report.group, "user_id"] if report.group == "user" else [report.group]
    writer.writerow(keys + COLUMNS)
    for item in [*report.items, report.total]:
        row = item.as_dict()
        first = [_cell(item.key)] + ([item.user_id or ""] if report.group == "user" else [])
        writer.writerow(first + [row[c] for c in COLUMNS])
    return out.getvalue()


def filename(report: Report) -> str:
    return f"usage-{report.group}-{report.start.isoformat()}-{report.end.isoformat()}.csv"
