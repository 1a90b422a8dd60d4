"""HTML pages; thin adapters over selectors and services."""

from __future__ import annotations

import contextlib
from typing import Any, Literal

from django.conf import settings
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from ninja import Schema
from pydantic import ValidationError

from accounts.preferences import get_user_settings
from core.errors import NotFound, RateLimited, ServiceError
from core.models_on_offer import list_models, model_in_force
from core.schemas import INSTRUCTIONS_MAX_CHARS, first_error
from knowledge.selectors import list_documents
from presets import selectors as preset_selectors
from toolbox import tool_catalog
from toolbox.servers import list_servers

from . import branches, feedback, selectors, shares
from .api.schemas import ConversationCreateIn
from .list_page import FILTER_KEYS
from .models import Conversation, MessageFeedback
from .rendering import render_markdown
from .replies import store
from .replies.start import start_conversation
from .tree import with_siblings

PAGE_SIZE = 50
# Landing on a search hit loads from a few messages before it, but not unboundedly many.
JUMP_CONTEXT = 5
JUMP_MAX_MESSAGES = 500
LANDING_PRESETS = 12  # chips on a new chat; the presets page lists them all


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


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """A new chat: the shell with an empty composer. Nothing is stored until it is sent."""
    if FILTER_KEYS & set(request.GET):  # an old link to the list page
        return redirect(f"{reverse('conversations')}?{request.GET.urlencode()}")
    chosen = preset_selectors.find_visible(user=request.user, preset_id=request.GET.get("preset"))
    return render(
        request,
        "conversations/new.html",
        {
            **_model_choices(),
            "presets": preset_selectors.visible_to(request.user)[:LANDING_PRESETS],
            "preset": chosen,
            "preset_missing": bool(request.GET.get("preset")) and chosen is None,
            "default_model": get_user_settings(user=request.user).default_model,
            "document_count": list_documents(user=request.user).count(),
            "message_max_chars": settings.MESSAGE_MAX_CHARS,
        },
    )


@require_POST
async def create(request: HttpRequest) -> HttpResponse:
    """Start a conversation with its first message (the composer's form, field `content`);
    the reply runs on in the background. Without a message nothing is created."""
    post = request.POST
    if not post.get("content", "").strip():
        return redirect("home")
    checked = {"1", "true", "yes", "on"}
    try:
        form = ConversationCreateIn.model_validate(
            {
                "title": post.get("title", ""),
                "project_id": post.get("project") or None,
                "model": post.get("model", ""),
                "temporary": post.get("temporary", "") in checked,
                "preset_id": post.get("preset") or None,
                "initial_message": {
                    "content": post["content"],
                    "client_id": post.get("client_id") or None,
                    "confirm_sensitive": post.get("confirm_sensitive", "") in checked,
                    "attachments": post.getlist("attachments"),
                },
            }
        )
        # An async view: the reply's task starts on the server's loop and outlives the request.
        conversation, _started = await start_conversation(
            user=await request.auser(), new=form.new_conversation(), message=form.initial_message
        )
    except ValidationError as exc:
        return HttpResponseBadRequest(first_error(exc))
    except ServiceError as exc:
        refused = HttpResponse(exc.message, status=exc.status, content_type="text/plain")
        if isinstance(exc, RateLimited):
            refused["Retry-After"] = str(exc.retry_after)
        return refused
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
        return {}, first_error(exc)
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
    preset = preset_selectors.find_visible(user=request.user, preset_id=conversation.preset_id)
    # The header counts the branch: what the page shows plus what it leaves out.
    hidden = branches.count_branch(conversation, leaving_out=[m.pk for m in message_list])
    return render(
        request,
        "conversations/detail.html",
        {
            "conversation": conversation,
            "message_list": message_list,
            "hidden": hidden,
            "branch_counts": hidden + branches.Counts.of(message_list),
            "has_older": not message_filter and _has_older(message_list),
            "message_filter": message_filter,
            "filter_error": filter_error,
            "forks": forks,
            **_model_choices(),
            "instructions_max_chars": INSTRUCTIONS_MAX_CHARS,
            "comment_max_chars": feedback.COMMENT_MAX_LENGTH,
            "feedback_reasons": MessageFeedback.Reason.choices,
            "report_max_chars": feedback.REASON_MAX_LENGTH,
            "message_max_chars": settings.MESSAGE_MAX_CHARS,
            "tool_menu": _tool_menu(conversation, request.user, preset),
            "preset": preset,
            # What a blank picker means here: side by side names both models.
            "default_model": model_in_force(
                preset.model if preset else "", get_user_settings(user=request.user).default_model
            ).id,
            "replying": store.running_run(conversation_id=conversation.pk) is not None,
        },
    )


def _tool_menu(conversation: Conversation, user: Any, preset: Any = None) -> dict[str, Any]:
    """The composer's tools menu: what is on offer and what is on here (the
    conversation's choice, else its preset's, else the user's default)."""
    owner = get_user_settings(user=user).tools_enabled
    tools = conversation.tools
    if tools is None and preset is not None:
        tools = preset.tools
    on = tool_catalog.enabled_ids(conversation_tools=tools, user_tools=owner)
    return tool_catalog.menu(tool_catalog.available(list_servers()), on)


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
        return HttpResponseBadRequest(_("Give `before` as a sequence number."))
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
    if not before:  # the page is shown in place of the branch: the header counts the rest
        hidden = branches.count_branch(conversation, leaving_out=[m.pk for m in message_list])
        response["X-Hidden-Messages"] = str(hidden.messages)
        response["X-Hidden-Tokens"] = str(hidden.tokens)
        response["X-Hidden-Estimated"] = "1" if hidden.estimated else "0"
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
            "bare": True,  # the shell without the sidebar: nothing of the viewer's own
        },
    )
    response["X-Robots-Tag"] = "noindex, nofollow"
    # The token is the page's only key: never send it on as a Referer.
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-store"
    return response
