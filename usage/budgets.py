"""Monthly token budgets: which one applies to a user, what they used, when it resets.

A month is the calendar month in UTC. The budget in force is the user's own (a `Budget`
row naming them), else the most generous of their groups' (a group's 0 means no limit,
which is the most generous), else CHAT_MONTHLY_TOKEN_BUDGET. 0 always means no limit, so
a user's own 0 lifts the limit for them whatever their groups say.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection

from .models import Budget, UsageRollup


@dataclass(frozen=True)
class BudgetState:
    """A user's budget this month: `limit` None means no limit."""

    limit: int | None
    used: int
    resets_at: datetime  # the first instant of next month, UTC

    @property
    def remaining(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.used)

    @property
    def exceeded(self) -> bool:
        return self.limit is not None and self.used >= self.limit

    @property
    def low(self) -> int:
        """Where the meter turns amber (three quarters used)."""
        return (self.limit or 0) * 3 // 4

    @property
    def high(self) -> int:
        """Where the meter turns red (nine tenths used)."""
        return (self.limit or 0) * 9 // 10

    @property
    def percent(self) -> int:
        """How much of the budget is used, 0-100 (0 without a limit)."""
        if not self.limit:
            return 0
        return min(100, round(100 * self.used / self.limit))


def month_start(now: datetime) -> date:
    """Return the first day of `now`'s calendar month in UTC."""
    return now.astimezone(UTC).date().replace(day=1)


def next_month_start(now: datetime) -> datetime:
    """Return the first instant (UTC) of the month after `now`'s."""
    first = month_start(now)
    year, month = (first.year + 1, 1) if first.month == 12 else (first.year, first.month + 1)
    return datetime(year, month, 1, tzinfo=UTC)


def budget_limit(user: Any) -> int | None:
    """Return the monthly token budget in force for `user` (None: no limit)."""
    # One statement for both (every claim asks, so written out: core/rows.py): the user's
    # own budget, else their groups'.
    with connection.cursor() as cursor:
        cursor.execute(
            _BUDGETS_SQL.format(budgets=Budget._meta.db_table, members=_MEMBERS), [user.pk] * 2
        )
        found = cursor.fetchall()
    for owner, tokens in found:
        if owner == user.pk:
            return tokens or None
    groups = [tokens for _owner, tokens in found]
    if groups:
        return None if 0 in groups else max(groups)
    return settings.CHAT_MONTHLY_TOKEN_BUDGET or None


_BUDGETS_SQL = """SELECT user_id, monthly_tokens FROM {budgets}
WHERE user_id = %s OR group_id IN (SELECT group_id FROM {members} WHERE user_id = %s)"""
_MEMBERS = get_user_model().groups.through._meta.db_table


def used_since(user_id: Any, start: date) -> int:
    """Return the tokens (input + output) the user's replies used from `start` on."""
    # Written out (every claim under a budget asks): the ORM's aggregate costs more CPU to
    # build than the query takes.
    with connection.cursor() as cursor:
        cursor.execute(_USED_SQL, [user_id, start])
        (total,) = cursor.fetchone()
    return int(total or 0)


_USED_SQL = f"""SELECT SUM(input_tokens + output_tokens) FROM {UsageRollup._meta.db_table}
WHERE user_id = %s AND day >= %s"""


def budget_state(user: Any, *, now: datetime, limit: int | bool | None = False) -> BudgetState:
    """Return the user's budget, what they used of it this month and when it resets
    (`limit`: the budget in force when the caller already asked budget_limit)."""
    if limit is False:
        limit = budget_limit(user)
    return BudgetState(limit, used_since(user.pk, month_start(now)), next_month_start(now))
