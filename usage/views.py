"""`/usage/` (yours) and `/admin/usage/` (staff): this month's tokens, charts and tables."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET
from pydantic import ValidationError

from core.schemas import first_error

from . import charts, selectors
from .budgets import budget_state
from .schemas import StaffUsageQuery, UsageRange, UserUsageQuery


def _range(request: HttpRequest, schema: type[UsageRange]) -> tuple[date, date, str]:
    """Read `from`/`to` from the query string; a bad range falls back to this month."""
    today = timezone.now().date()
    given = {k: request.GET[k] for k in ("from", "to") if request.GET.get(k)}
    try:
        start, end = schema.model_validate(given).days(today)
        return start, end, ""
    except ValidationError as exc:
        start, end = schema().days(today)
        return start, end, first_error(exc)


def _charts(by_day: selectors.Report, by_model: selectors.Report) -> dict[str, Any]:
    days = selectors.every_day(by_day)
    return {
        "days": days,
        "day_chart": charts.day_chart(days),
        "models": charts.shares(by_model.items),
        "total": by_day.total,
    }


@require_GET
def my_usage(request: HttpRequest) -> HttpResponse:
    """Show the user's tokens by day and by model, and their budget this month."""
    start, end, error = _range(request, UserUsageQuery)
    mine = {"user_id": request.user.pk, "start": start, "end": end}
    context = _charts(
        selectors.user_usage(group="day", **mine), selectors.user_usage(group="model", **mine)
    )
    context |= {
        "start": start,
        "end": end,
        "error": error,
        "budget": budget_state(request.user, now=timezone.now()),
    }
    return render(request, "usage/mine.html", context, status=400 if error else 200)


@require_GET
def _staff_usage(request: HttpRequest) -> HttpResponse:
    """Show every user's tokens by user, model and day, and the top conversations.

    Under /admin/: the request runs in the maintenance scope (every user's rows).
    """
    start, end, error = _range(request, StaffUsageQuery)
    span = {"start": start, "end": end}
    context = _charts(
        selectors.staff_usage(group="day", **span), selectors.staff_usage(group="model", **span)
    )
    context |= {
        "start": start,
        "end": end,
        "error": error,
        "users": charts.shares(selectors.staff_usage(group="user", **span).items),
        "top": selectors.top_conversations(**span),
        "csv_query": f"from={start.isoformat()}&to={end.isoformat()}&format=csv",
    }
    return render(request, "usage/staff.html", context, status=400 if error else 200)


staff_usage = admin.site.admin_view(_staff_usage)  # staff only; others go to the admin login
