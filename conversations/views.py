"""HTML pages; thin adapters over selectors and services."""

from __future__ import annotations

import contextlib
from datetime import date, datetime, time
from typing import Any, Literal

from django.conf import settings
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from ninja import Field, Schema
from pydantic import ValidationError

from core.errors import NotFound, ServiceError
from core.llm_catalog import list_models
from core.schemas import Text

from . import branches, exports, search, selectors, services, shares
from .api.conversations import export_response
from .api.schemas import ConversationCreateIn, ProjectId, Status
from .models import INSTRUCTIONS_MAX_CHARS, Conversation
from .rendering import render_markdown
from .tree import with_siblings

PAGE_SIZE = 50
SIDEBAR_SIZE = 60
# Landing on a search hit loads from a few messages before it, but not unboundedly many.
JUMP_CONTEXT = 5
JUMP_MAX_MESSAGES = 500


def _conversation_or_404(request: HttpRequest, conversation_id: Any) -> Conversation:
    try:
        return selectors.get_conversation_for_user(
            user=request.user, conversation_id=conversation_id
        )
    except NotFound as exc:
        raise Http404(exc.message) from None


def _model_choices() -> dict[str, Any]:
    """Return the models a picker offers (the default first)."""
    return {"models": list_models()}


def _sidebar(request: HttpRequest) -> dict[str, Any]:
    """Group the user's unarchived conversations by project, newest activity first."""
    recent = [
        c
        for c in selectors.list_recent_conversations(user=request.user, limit=SIDEBAR_SIZE)
        if c.status != Conversation.Status.ARCHIVED
    ]
    groups: dict[Any, list[Conversation]] = {}
    for conversation in recent:  # already newest first, so groups come out in that order
        groups.setdefault(conversation.project, []).append(conversation)
    projects = selectors.list_projects(user=request.user)
    return {
        "sidebar": list(groups.items()),
        "projects": projects,
        "sidebar_projects": [{"id": p.id, "name": p.name} for p in projects],
    }


class ListPageQuery(Schema):
    """The list page's query string (the same field types as the API's filters)."""

    q: Text | None = Field(None, max_length=200)
    status: Status | None = None
    project: ProjectId | None = None
    service: Text | None = Field(None, max_length=100)
    from_: date | None = Field(None, alias="from")
    to: date | None = None
    sort: Literal["created_at", "updated_at", "last_message_at", "message_count"] = "updated_at"
    order: Literal["asc", "desc"] = "desc"
    cursor: Text | None = Field(None, max_length=1000)
    role: Literal["user", "assistant"] | None = None  # of the matching messages


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
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        query, error = ListPageQuery(), f"{where}: {problem['msg']}"
    else:
        error = None
    filters = {
        "q": query.q,
        "status": query.status,
        "project_id": query.project,
        "service_id": query.service,
        "created_after": _day_bound(query.from_, end=False),
        "created_before": _day_bound(query.to, end=True),
        "sort": query.sort,
        "order": query.order,
        "role": query.role,
    }
    return filters, error, query.cursor


FILTER_KEYS = {"q", "status", "project", "service", "from", "to", "sort", "order", "cursor", "role"}


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    filters, error, cursor = _list_filters(request)
    role = filters.pop("role")
    page = search.Page(items=[], next_cursor=None)
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
    if filters["q"] and not cursor:
        try:
            # The date range picks the messages by when they were written.
            hits = search.search_messages(
                user=request.user,
                q=filters["q"],
                limit=20,
                role=role,
                after=filters["created_after"],
                before=filters["created_before"],
            ).items
        except ServiceError:
            hits = []
    context.update(
        {
            **_sidebar(request),
            **_model_choices(),
            "statuses": Conversation.Status.choices,
            "hits": hits,
            "query": request.GET,
            "filtered": bool(role)
            or any(v for k, v in filters.items() if k not in {"sort", "order"}),
        }
    )
    return render(request, "conversations/list.html", context)


@require_POST
def create(request: HttpRequest) -> HttpResponse:
    try:
        form = ConversationCreateIn.model_validate(
            {
                "title": request.POST.get("title", ""),
                "project_id": request.POST.get("project") or None,
                "model": request.POST.get("model", ""),
            }
        )
        conversation = services.create_conversation(
            user=request.user, title=form.title, project=form.project_id, model=form.model
        )
    except ValidationError as exc:
        return HttpResponseBadRequest(exc.errors()[0]["msg"])
    except ServiceError as exc:
        return HttpResponseBadRequest(exc.message)
    return redirect("conversation", conversation_id=conversation.id)


def _messages_for_page(conversation: Conversation, at: str) -> list:
    """Return the current branch's newest page, or from a little before message number
    `at` when it is older."""
    newest = branches.list_messages(conversation=conversation, limit=PAGE_SIZE, newest=True)
    if not at.isdigit() or not newest or int(at) >= newest[0].sequence_number:
        return newest
    page = branches.list_messages(
        conversation=conversation, before=int(at) + 1, limit=JUMP_CONTEXT + 1, newest=True
    )
    after = page[0].sequence_number - 1 if page else 0
    return branches.list_messages(conversation=conversation, after=after, limit=JUMP_MAX_MESSAGES)


def _has_older(message_list: list) -> bool:
    return bool(message_list) and message_list[0].parent_id is not None


class MessageFilterQuery(Schema):
    """The conversation page's message filter (the API's `role`, `part`, `has_tool`)."""

    role: Literal["user", "assistant", "system"] | None = None
    part: Literal["thinking", "tool_call", "tool_result", "references"] | None = None
    has_tool: Literal["true"] | None = None


def _message_filter(request: HttpRequest) -> tuple[dict[str, Any], str | None]:
    """Return the page's message filter as branches.list_messages takes it (empty: none),
    or say what is wrong with it."""
    raw = {k: request.GET[k].strip() for k in ("role", "part", "has_tool") if request.GET.get(k)}
    try:
        query = MessageFilterQuery.model_validate(raw)
    except ValidationError as exc:
        problem = exc.errors()[0]
        return {}, f"{'.'.join(str(p) for p in problem['loc'])}: {problem['msg']}"
    found = {"role": query.role, "part": query.part, "has_tool": bool(query.has_tool) or None}
    return {k: v for k, v in found.items() if v is not None}, None


@require_GET
def detail(request: HttpRequest, conversation_id: Any) -> HttpResponse:
    conversation = _conversation_or_404(request, conversation_id)
    shown = request.GET.get("m", "")
    if shown:  # a search hit: open the branch that holds it
        with contextlib.suppress(NotFound):  # not this conversation's: show it as it is
            conversation = branches.show_message(
                user=request.user, message_id=shown, conversation_id=conversation.pk
            )
    message_filter, filter_error = _message_filter(request)
    if message_filter:
        message_list = branches.list_messages(
            conversation=conversation, limit=JUMP_MAX_MESSAGES, newest=True, **message_filter
        )
    else:
        message_list = _messages_for_page(conversation, request.GET.get("at", ""))
    forks = list(conversation.forks.order_by("created_at").only("id", "title"))
    return render(
        request,
        "conversations/detail.html",
        {
            "conversation": conversation,
            "message_list": message_list,
            "has_older": not message_filter and _has_older(message_list),
            "message_filter": message_filter,
            "filter_error": filter_error,
            "forks": forks,
            **_sidebar(request),
            **_model_choices(),
            "instructions_max_chars": INSTRUCTIONS_MAX_CHARS,
            "message_max_chars": settings.MESSAGE_MAX_CHARS,
        },
    )


@require_GET
def message_fragment(request: HttpRequest, conversation_id: Any, message_id: Any) -> HttpResponse:
    conversation = _conversation_or_404(request, conversation_id)
    try:
        message = selectors.get_message_for_user(user=request.user, message_id=message_id)
    except NotFound as exc:
        raise Http404(exc.message) from None
    if message.conversation_id != conversation.id:
        raise Http404("Message not found.")
    rows = selectors.for_display(with_siblings([message]), user_id=request.user.pk)
    return render(request, "conversations/_message.html", {"m": rows[0]})


@require_GET
def summary_fragment(request: HttpRequest, conversation_id: Any) -> HttpResponse:
    """The conversation summary as sanitized HTML (the panel renders its Markdown)."""
    conversation = _conversation_or_404(request, conversation_id)
    return HttpResponse(render_markdown(conversation.summary))


@require_GET
def older_messages_fragment(request: HttpRequest, conversation_id: Any) -> HttpResponse:
    conversation = _conversation_or_404(request, conversation_id)
    before = request.GET.get("before", "")
    if before and (not before.isdigit() or int(before) > 2**31 - 1):
        return HttpResponseBadRequest("Give `before` as a sequence number.")
    # Without `before`: the current branch's newest page (the page shows another branch).
    message_list = branches.list_messages(
        conversation=conversation,
        before=int(before) if before else None,
        limit=PAGE_SIZE,
        newest=True,
    )
    response = render(request, "conversations/_messages.html", {"message_list": message_list})
    response["X-Has-Older"] = "1" if _has_older(message_list) else "0"
    response["X-Current-Message"] = str(conversation.current_message_id or "")
    return response


@require_GET
def shared(request: HttpRequest, token: str) -> HttpResponse:
    """A share link's public page: the snapshot's title and messages, nothing else."""
    try:
        share, message_list = shares.shared_snapshot(token)
    except NotFound as exc:
        raise Http404(exc.message) from None
    response = render(
        request,
        "conversations/shared.html",
        {
            "share": share,
            "message_list": message_list,
            "cut": len(share.message_ids) > shares.PAGE_MAX_MESSAGES,
        },
    )
    response["X-Robots-Tag"] = "noindex, nofollow"
    # The token is the page's only key: never send it on as a Referer.
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-store"
    return response


@require_GET
def documents(request: HttpRequest) -> HttpResponse:
    return render(request, "documents/index.html", _sidebar(request))


@require_GET
def export(request: HttpRequest, conversation_id) -> StreamingHttpResponse:
    """Download a conversation as Markdown, JSON or text (attachment, streamed)."""
    conversation = _conversation_or_404(request, conversation_id)
    fmt = request.GET.get("format", "markdown")
    if fmt not in exports.FORMATS:
        return HttpResponseBadRequest("format must be markdown, json or text")
    include_metadata = request.GET.get("include_metadata", "") in {"1", "true", "yes", "on"}
    return export_response(conversation, fmt, include_metadata)
