"""HTML pages; thin adapters over selectors and services."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from . import selectors, services
from .errors import NotFound, ServiceError


def _conversation_or_404(request: HttpRequest, conversation_id):
    try:
        return selectors.get_conversation_for_user(
            user=request.user, conversation_id=conversation_id
        )
    except NotFound as exc:
        raise Http404(exc.message) from None


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    conversations = selectors.list_recent_conversations(user=request.user)
    return render(request, "conversations/list.html", {"conversations": conversations})


@require_POST
def create(request: HttpRequest) -> HttpResponse:
    try:
        conversation = services.create_conversation(
            user=request.user, title=request.POST.get("title", "")
        )
    except ServiceError as exc:
        return HttpResponseBadRequest(exc.message)
    return redirect("conversation", conversation_id=conversation.id)


@require_GET
def detail(request: HttpRequest, conversation_id) -> HttpResponse:
    conversation = _conversation_or_404(request, conversation_id)
    messages = selectors.list_messages(conversation=conversation, limit=50, newest=True)
    return render(
        request,
        "conversations/detail.html",
        {"conversation": conversation, "messages": messages},
    )
