"""`/settings/memory/`: the user's memories, one form per action (no JavaScript needed)."""

from __future__ import annotations

from django.contrib import messages as flash
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from accounts.preferences import get_user_settings, update_user_settings
from core.errors import ServiceError

from . import selectors, services

# The page's filter by where a memory came from (services.Basis), in its order.
BASES = {
    "stated": gettext_lazy("You said it"),
    "inferred": gettext_lazy("Inferred by the assistant"),
    "added": gettext_lazy("Added by you"),
}


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
    every = services.list_memories(user_id=user.pk)
    shown = request.GET.get("basis", "")
    shown = shown if shown in BASES else ""
    items = [m for m in every if m["basis"] == shown] if shown else every
    sources = selectors.sources_of(user=user, memories=items)  # type: ignore[arg-type]
    for item in items:
        item["source_title"] = sources[item["id"]]["title"]  # type: ignore[typeddict-unknown-key]
        item["source_words"] = sources[item["id"]]["words"]  # type: ignore[typeddict-unknown-key]
    counts = {basis: sum(m["basis"] == basis for m in every) for basis in BASES}
    context = {
        "memories": items,
        "basis": shown,
        "filters": [(basis, BASES[basis], counts[basis]) for basis in BASES if counts[basis]],
        "total": len(every),
        "enabled": get_user_settings(user=user).memory_enabled,
        "max_chars": services.MAX_CHARS,
    }
    return render(request, "accounts/memories.html", context, status=status)
