"""`GET /usage` (yours) and `GET /admin/usage` (staff): token totals (SPEC: usage and budgets)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.translation import gettext as _
from ninja import Query, Router

from core import rls
from core.errors import NotFound
from core.schemas import errors

from . import exports, selectors
from .budgets import budget_state
from .schemas import StaffUsageQuery, UsageOut, UserUsageQuery

router = Router(tags=["usage"])

ERRORS = errors(400, 401, 404, 422)


def _out(report: selectors.Report, budget: dict | None = None) -> dict:
    return {
        "from": report.start,
        "to": report.end,
        "group": report.group,
        "items": [item.as_dict() for item in report.items],
        "total": report.total.as_dict(),
        "budget": budget,
    }


@router.get("/usage", response={200: UsageOut, **ERRORS}, by_alias=True)
def my_usage(request: HttpRequest, query: Query[UserUsageQuery]):
    """Your tokens (input + output of your replies) by day or by model, and your budget.

    Days are UTC; without `from`/`to`, this calendar month so far.
    """
    now = timezone.now()
    start, end = query.days(now.date())
    user = request.auth
    report = selectors.user_usage(user_id=user.pk, start=start, end=end, group=query.group)
    state = budget_state(user, now=now)
    budget = {
        "monthly_tokens": state.limit,
        "used": state.used,
        "remaining": state.remaining,
        "resets_at": state.resets_at,
    }
    return _out(report, budget)


@router.get("/admin/usage", response={200: UsageOut, **ERRORS}, by_alias=True)
def staff_usage(request: HttpRequest, query: Query[StaffUsageQuery]):
    """Every user's tokens by user, model or day (staff only; `format=csv` for a file)."""
    user = request.auth
    if not (user.is_active and user.is_staff):
        raise NotFound(_("No such API operation."))
    start, end = query.days(timezone.now().date())
    with rls.maintenance():  # staff read every user's rows, as in /admin/
        report = selectors.staff_usage(start=start, end=end, group=query.group)
    if query.format == "csv":
        response = HttpResponse(exports.report_csv(report), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{exports.filename(report)}"'
        return response
    return _out(report)
