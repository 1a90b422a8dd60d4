"""The prompts page: the list (edit, delete) and the editor."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import ServiceError, page_errors

from . import selectors, services
from .forms import PromptForm, initial_of
from .models import Prompt


def prompts(request: HttpRequest) -> HttpResponse:
    """List the prompts the user may use: theirs, then those shared with everyone."""
    return render(request, "prompts/list.html", {"prompts": selectors.visible_to(request.user)})


@require_http_methods(["GET", "POST"])
def edit(request: HttpRequest, prompt_id: Any = None) -> HttpResponse:
    """Save a new prompt (no id) or change the user's own one."""
    prompt = _own(request, prompt_id) if prompt_id is not None else None
    form = PromptForm(
        request.POST or None,
        initial=initial_of(prompt) if prompt else None,
        staff=request.user.is_staff,
    )
    status = 200
    if request.method == "POST":
        status = 400
        data = form.to_prompt() if form.is_valid() else None
        if data is not None:
            try:
                if prompt is None:
                    services.create_prompt(user=request.user, data=data)
                else:
                    changes = data.model_dump()
                    if "shared" not in form.fields:
                        changes.pop("shared")
                    services.update_prompt(user=request.user, prompt_id=prompt.pk, changes=changes)
            except ServiceError as exc:
                form.add_error("command" if exc.code == "conflict" else None, exc.message)
            else:
                messages.success(request, _("Prompt saved."))
                return redirect("prompts")
    return render(request, "prompts/edit.html", {"form": form, "prompt": prompt}, status=status)


@require_POST
def delete(request: HttpRequest, prompt_id: Any) -> HttpResponse:
    """Delete the user's own prompt."""
    services.delete_prompt(user=request.user, prompt_id=_own(request, prompt_id).pk)
    messages.success(request, _("Prompt deleted."))
    return redirect("prompts")


def _own(request: HttpRequest, prompt_id: Any) -> Prompt:
    """The user's own prompt; a shared one of someone else is 403, any other 404."""
    with page_errors():
        return selectors.access_prompt(user=request.user, prompt_id=prompt_id, editable=True)
