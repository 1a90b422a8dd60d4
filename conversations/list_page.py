"""The list of all conversations (`/conversations/`): search, filters, sorts, bulk actions,
import; `/` with its old query parameters redirects here (`FILTER_KEYS`)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any, Literal

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET
from ninja import Field, Schema
from pydantic import ValidationError

from core.errors import RateLimited, ServiceError
from core.pagination import Page
from core.schemas import Text, first_error

from . import search, selectors
from .api.schemas import ProjectId, Status
from .models import Conversation
from .realtime.ratelimit import check_rate
from .schemas import SortField

PAGE_SIZE = 50


class ListPageQuery(Schema):
    """The list page's query string (the same field types as the API's filters)."""

    q: Text | None = Field(None, max_length=200)
    status: Status | None = None
    project: ProjectId | None = None
    service: Text | None = Field(None, max_length=100)
    from_: date | None = Field(None, alias="from")
    to: date | None = None
    sort: SortField = "updated_at"
    order: Literal["asc", "desc"] = "desc"
    cursor: Text | None = Field(None, max_length=1000)
    role: Literal["user", "assistant"] | None = None  # of the matching messages
    when: Literal["today", "7d", "30d", "365d"] | None = None  # a preset for `from`


def _day_bound(day: date | None, *, end: bool) -> datetime | None:
    if day is None:
        return None
    return timezone.make_aware(datetime.combine(day, time.max if end else time.min))


def _list_filters(request: HttpRequest) -> tuple[dict[str, Any], str | None, str | None]:
    """Read the list page's filters as the search selector takes them, or say what is wrong."""
    raw = {key: value.strip() for key, value in request.GET.items() if value.strip()}
    raw.pop("fragment", None)
    try:
        query = ListPageQuery.model_validate({k: v for k, v in raw.items() if k in FILTER_KEYS})
    except ValidationError as exc:
        query, error = ListPageQuery(), first_error(exc)
    else:
        error = None
    filters = {
        "q": query.q,
        "status": query.status,
        "project_id": query.project,
        "service_id": query.service,
        "created_after": _day_bound(query.from_ or _preset_start(query.when), end=False),
        "created_before": _day_bound(query.to, end=True),
        "sort": query.sort,
        "order": query.order,
        "role": query.role,
    }
    return filters, error, query.cursor


FILTER_KEYS = {
    "q", "status", "project", "service", "from", "to", "sort", "order", "cursor", "role", "when"
}  # fmt: skip
WHEN_DAYS = {"today": 0, "7d": 7, "30d": 30, "365d": 365}


def _preset_start(when: str | None) -> date | None:
    """Return the first day a `when` preset covers (today, the last 7, 30 or 365 days)."""
    return None if when is None else timezone.localdate() - timedelta(days=WHEN_DAYS[when])


def _when_choices() -> list[tuple[str, str]]:
    return [
        ("today", _("Today")),
        ("7d", _("Last 7 days")),
        ("30d", _("Last 30 days")),
        ("365d", _("Last 12 months")),
    ]


@require_GET
def conversation_list(request: HttpRequest) -> HttpResponse:
    """All conversations: search, filters, sorts, bulk actions, import."""
    filters, error, cursor = _list_filters(request)
    role = filters.pop("role")
    page: Page[Conversation] = Page(items=[], next_cursor=None)
    if error is None:
        try:
            page = search.list_conversations(
                user=request.user, limit=PAGE_SIZE, cursor=cursor, **filters
            )
        except ServiceError as exc:
            error = exc.message
    context = {"page": page, "conversations": page.items, "filter_error": error}
    if request.GET.get("fragment") == "rows":
        response = render(request, "conversations/_rows.html", context)
        response["X-Next-Cursor"] = page.next_cursor or ""
        return response
    hits = None
    refused: RateLimited | None = None
    if filters["q"] and not cursor:
        try:
            check_rate(
                user_id=request.user.pk, rate=settings.CHAT_SEARCH_RATE_LIMIT, what="searches"
            )
            # The date range picks the messages by when they were written.
            hits = search.search_messages(
                user=request.user,
                q=filters["q"],
                limit=20,
                role=role,
                after=filters["created_after"],
                before=filters["created_before"],
            ).items
        except RateLimited as exc:
            refused, context["filter_error"] = exc, exc.message
        except ServiceError:
            hits = []
    context.update(
        {
            "projects": selectors.list_projects(user=request.user),
            "statuses": Conversation.Status.choices,
            "when_choices": _when_choices(),
            "filtered_beyond_q": bool(role)
            or any(v for k, v in filters.items() if k not in {"sort", "order", "q"})
            or filters["sort"] != "updated_at"
            or filters["order"] != "desc",
            "hits": hits,
            "query": request.GET,
            "filtered": bool(role)
            or any(v for k, v in filters.items() if k not in {"sort", "order"}),
        }
    )
    response = render(request, "conversations/list.html", context)
    if refused is not None:
        response.status_code = 429
        response["Retry-After"] = str(refused.retry_after)
    return response
