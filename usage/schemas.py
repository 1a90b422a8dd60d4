"""The usage queries' input (API and pages alike) and their answer's shape."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from ninja import Field, Schema
from pydantic import model_validator

from core.schemas import Input

MAX_SPAN_DAYS = 366
# Dates a range may name: far enough either way, and a day after `to` still exists.
EARLIEST = date(2000, 1, 1)
LATEST = date(9998, 12, 31)


class UsageRange(Input):
    """A range of days (UTC, both ends included); none given: this month so far."""

    start: date | None = Field(None, alias="from", ge=EARLIEST, le=LATEST)
    end: date | None = Field(None, alias="to", ge=EARLIEST, le=LATEST)

    @model_validator(mode="after")
    def _bounded(self) -> UsageRange:
        if self.start and self.end:
            if self.start > self.end:
                raise ValueError("`from` must not be after `to`")
            if (self.end - self.start).days >= MAX_SPAN_DAYS:
                raise ValueError(f"a range is at most {MAX_SPAN_DAYS} days")
        return self

    def days(self, today: date) -> tuple[date, date]:
        """Return the range's first and last day; missing ends: this month, or a span of
        at most MAX_SPAN_DAYS around the end given."""
        end = self.end or (max(today, self.start) if self.start else today)
        start = self.start or end.replace(day=1)
        if (end - start).days >= MAX_SPAN_DAYS:
            end = date.fromordinal(start.toordinal() + MAX_SPAN_DAYS - 1)
        return start, end


class UserUsageQuery(UsageRange):
    group: Literal["day", "model"] = "day"


class StaffUsageQuery(UsageRange):
    group: Literal["user", "model", "day"] = "user"
    format: Literal["json", "csv"] = "json"


class UsageRow(Schema):
    key: str = Field(description="the day (YYYY-MM-DD), the model id, or the username")
    user_id: int | None = Field(None, description="group=user: the user's id")
    input_tokens: int
    output_tokens: int
    total_tokens: int
    replies: int


class BudgetOut(Schema):
    monthly_tokens: int | None = Field(description="null: no limit")
    used: int = Field(description="input + output tokens this calendar month (UTC)")
    remaining: int | None
    resets_at: datetime


class UsageOut(Schema):
    start: date = Field(alias="from")
    end: date = Field(alias="to")
    group: str
    items: list[UsageRow]
    total: UsageRow
    budget: BudgetOut | None = Field(None, description="yours (GET /usage only)")
