"""`/settings/memory/`: the user's memories, one form per action (no JavaScript needed)."""

from __future__ import annotations

from django.contrib import messages as flash
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from accounts.preferences import get_user_settings, update_user_settings
from conversations.selectors import existing_conversation_titles
from core.errors import ServiceError

from . import services


@require_http_methods(["GET", "POST"])
def memories(request: HttpRequest) -> HttpResponse:
    """List the memories; add, edit or delete one; switch memory on or off."""
    user = request.user
    status = 200
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "add":
                services.add_memory(user_id=user.pk, text=request.POST.get("text", ""))
            elif action == "edit":
                services.edit_memory(
                    user_id=user.pk,
                    memory_id=request.POST.get("id", ""),
                    text=request.POST.get("text", ""),
                )
            elif action == "delete":
                services.delete_memory(user_id=user.pk, memory_id=request.POST.get("id", ""))
            elif action == "switch":
                update_user_settings(user=user, memory_enabled=request.POST.get("enabled") == "on")
            else:
                raise ServiceError(_("Unknown action."))
        except ServiceError as exc:
            flash.error(request, exc.message)
            status = 400
        else:
            return redirect("memories")
    items = services.list_memories(user_id=user.pk)
    titles = existing_conversation_titles(
        user=user, ids=[m["source"]["conversation_id"] for m in items]
    )
    for item in items:
        conversation_id = item["source"]["conversation_id"]
        item["source_title"] = titles.get(conversation_id) if conversation_id else None  # type: ignore[typeddict-unknown-key]
    context = {
        "memories": items,
        "enabled": get_user_settings(user=user).memory_enabled,
        "max_chars": services.MAX_CHARS,
    }
    return render(request, "accounts/memories.html", context, status=status)
