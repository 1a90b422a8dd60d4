"""Reading usage: a user's totals, staff totals across users, top conversations.

Everything reads the rollup (never the messages), so a page costs the same at millions
of messages. Staff readers expect the maintenance scope (every user's rows); a user's
reader works in that user's own scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any
from uuid import UUID

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import F, QuerySet, Sum

from .models import ConversationMonth, UsageRollup

TOP_CONVERSATIONS = 10


@dataclass
class Totals:
    key: str
    input_tokens: int = 0
    output_tokens: int = 0
    replies: int = 0
    user_id: int | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "user_id": self.user_id,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "replies": self.replies,
        }


@dataclass
class Report:
    """Totals grouped one way, and their sum."""

    start: date
    end: date
    group: str
    items: list[Totals]
    total: Totals = field(default_factory=lambda: Totals("total"))


_SUMS = {
    "input_tokens": Sum("input_tokens"),
    "output_tokens": Sum("output_tokens"),
    "replies": Sum("replies"),
}


def _rows(start: date, end: date, user_id: Any = None) -> QuerySet[UsageRollup]:
    rows = UsageRollup.objects.filter(day__gte=start, day__lte=end)
    return rows.filter(user_id=user_id) if user_id is not None else rows


def _totals(key: str, row: dict[str, Any], user_id: int | None = None) -> Totals:
    return Totals(
        key,
        int(row["input_tokens"] or 0),
        int(row["output_tokens"] or 0),
        int(row["replies"] or 0),
        user_id,
    )


def _report(rows: QuerySet[UsageRollup], start: date, end: date, group: str) -> Report:
    """Group `rows` by day or model (largest first; days in order)."""
    grouped = rows.values(group).annotate(**_SUMS)
    if group == "day":
        items = [_totals(r["day"].isoformat(), r) for r in grouped.order_by("day")]
    else:
        ordered = grouped.order_by(-(F("input_tokens") + F("output_tokens")), "model")
        items = [_totals(r["model"], r) for r in ordered]
    return _with_total(Report(start, end, group, items))


def _by_user(start: date, end: date) -> Report:
    """Group every user's rows by user, largest first (whole months read monthly rows)."""
    rows = _monthly_sums("user_id", start, end)
    rows.sort(key=lambda r: (-(r["input_tokens"] + r["output_tokens"]), r["user_id"]))
    names = _usernames([r["user_id"] for r in rows])
    items = [_totals(names.get(r["user_id"], "?"), r, r["user_id"]) for r in rows]
    return _with_total(Report(start, end, "user", items))


def _with_total(report: Report) -> Report:
    total = report.total
    for item in report.items:
        total.input_tokens += item.input_tokens
        total.output_tokens += item.output_tokens
        total.replies += item.replies
    return report


def _usernames(user_ids: list[Any]) -> dict[Any, str]:
    users = get_user_model().objects.filter(pk__in=user_ids)
    return {pk: name for pk, name in users.values_list("pk", get_user_model().USERNAME_FIELD)}


def user_usage(*, user_id: Any, start: date, end: date, group: str) -> Report:
    """Return one user's tokens from `start` to `end` (UTC days), by day or by model."""
    return _report(_rows(start, end, user_id), start, end, group)


def staff_usage(*, start: date, end: date, group: str) -> Report:
    """Return every user's tokens from `start` to `end`, by user, model or day."""
    if group == "user":
        return _by_user(start, end)
    return _report(_rows(start, end), start, end, group)


def every_day(report: Report) -> list[Totals]:
    """Return a by-day report's items with the days that used nothing filled in."""
    known = {item.key: item for item in report.items}
    days, day = [], report.start
    while day <= report.end:
        days.append(known.get(day.isoformat()) or Totals(day.isoformat()))
        day += timedelta(days=1)
    return days


@dataclass(frozen=True)
class TopConversation:
    conversation_id: Any
    title: str
    owner: str
    total_tokens: int
    replies: int
    deleted: bool


def _full_months(start: date, end: date) -> tuple[date, date]:
    """Return the first day of the first whole month in the range and the last day of the
    last one (the first after the second when the range holds no whole month)."""
    first = start if start.day == 1 else (start.replace(day=28) + timedelta(days=4)).replace(day=1)
    after = end + timedelta(days=1)
    last = end if after.day == 1 else end.replace(day=1) - timedelta(days=1)
    return first, last


# Whole months from the monthly table, the days around them from the rollup.
_MONTHLY_SQL = f"""
SELECT {{keys}}, SUM(input_tokens), SUM(output_tokens), SUM(replies) FROM (
  SELECT {{keys}}, input_tokens, output_tokens, replies
  FROM {ConversationMonth._meta.db_table} WHERE month >= %s AND month <= %s
  UNION ALL
  SELECT {{keys}}, input_tokens, output_tokens, replies
  FROM {UsageRollup._meta.db_table} WHERE day >= %s AND day <= %s AND (day < %s OR day > %s)
) rows
GROUP BY {{keys}} {{tail}}
"""


def _monthly_sums(
    keys: str, start: date, end: date, *, tail: str = "", params: tuple = ()
) -> list[dict[str, Any]]:
    """Sum tokens and replies by `keys` (columns both tables have) from `start` to `end`."""
    first, last = _full_months(start, end)
    names = [k.strip() for k in keys.split(",")]
    with connection.cursor() as cursor:
        cursor.execute(
            _MONTHLY_SQL.format(keys=keys, tail=tail),
            [first, last, start, end, first, last, *params],
        )
        columns = [*names, "input_tokens", "output_tokens", "replies"]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def top_conversations(
    *, start: date, end: date, limit: int = TOP_CONVERSATIONS
) -> list[TopConversation]:
    """Return the conversations that used the most tokens in the range (deleted ones too)."""
    rows = _monthly_sums(
        "conversation_id, user_id",
        start,
        end,
        tail="ORDER BY SUM(input_tokens + output_tokens) DESC, conversation_id LIMIT %s",
        params=(limit,),
    )
    for row in rows:  # SQLite answers text
        row["conversation_id"] = UUID(str(row["conversation_id"]))
        row["tokens"] = int(row["input_tokens"] or 0) + int(row["output_tokens"] or 0)
    # Read by name: the rollup sits below conversations/, which records into it.
    conversation = apps.get_model("conversations", "Conversation")
    titles = dict(
        conversation.objects.filter(pk__in=[r["conversation_id"] for r in rows]).values_list(
            "pk", "title"
        )
    )
    names = _usernames([r["user_id"] for r in rows])
    return [
        TopConversation(
            r["conversation_id"],
            titles.get(r["conversation_id"], ""),
            names.get(r["user_id"], "?"),
            int(r["tokens"] or 0),
            int(r["replies"] or 0),
            r["conversation_id"] not in titles,
        )
        for r in rows
    ]
