"""The presets pages: the list (start, edit, delete) and the editor."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import ServiceError, page_errors
from core.models_on_offer import list_models
from knowledge.selectors import list_documents
from toolbox import tool_catalog
from toolbox.servers import list_servers

from . import selectors, services
from .forms import PresetForm, initial_of
from .models import Preset
from .schemas import PresetIn, PresetOut


def presets(request: HttpRequest) -> HttpResponse:
    """List the presets the user may use: theirs, then those shared with everyone."""
    return render(request, "presets/list.html", {"presets": selectors.visible_to(request.user)})


@require_http_methods(["GET", "POST"])
def edit(request: HttpRequest, preset_id: Any = None) -> HttpResponse:
    """Create a preset (no id) or change the user's own one."""
    preset = _own(request, preset_id) if preset_id is not None else None
    form = _form(request, preset)
    status = 200
    if request.method == "POST":
        status = 400
        data = form.to_preset() if form.is_valid() else None
        if data is not None:
            try:
                if preset is None:
                    preset = services.create_preset(user=request.user, data=data)
                else:
                    changes = _changes(preset, data, request.user)
                    if "tools" not in form.fields:  # nothing on offer: keep what it had
                        changes.pop("tools", None)
                    if "shared" not in form.fields:
                        changes.pop("shared", None)
                    services.update_preset(user=request.user, preset_id=preset.pk, changes=changes)
            except ServiceError as exc:
                form.add_error(None, exc.message)
            else:
                messages.success(request, _("Preset saved."))
                return redirect("presets")
    context = {"form": form, "preset": preset}
    return render(request, "presets/edit.html", context, status=status)


@require_POST
def delete(request: HttpRequest, preset_id: Any) -> HttpResponse:
    """Delete the user's own preset; its conversations go on with the defaults."""
    services.delete_preset(user=request.user, preset_id=_own(request, preset_id).pk)
    messages.success(request, _("Preset deleted."))
    return redirect("presets")


def _own(request: HttpRequest, preset_id: Any) -> Preset:
    """The user's own preset; a shared one of someone else is 403, any other 404."""
    with page_errors():
        return selectors.access_preset(user=request.user, preset_id=preset_id, editable=True)


def _changes(preset: Preset, data: PresetIn, user: Any) -> dict[str, Any]:
    """The fields the form changed: one left as it was is not judged again (a model no
    longer on offer stays the preset's until its owner picks another)."""
    current = PresetOut.of(preset, user_id=user.pk).model_dump()
    return {k: v for k, v in data.model_dump().items() if v != current.get(k)}


def _form(request: HttpRequest, preset: Preset | None) -> PresetForm:
    tools = [
        (t.id, f"{t.name} ({t.server})" if t.server else t.name)
        for t in tool_catalog.available(list_servers())
    ]
    models = [(m.id, m.label) for m in list_models()]
    if preset is not None and preset.model and preset.model not in dict(models):
        models.append((preset.model, _("%(model)s (no longer offered)") % {"model": preset.model}))
    return PresetForm(
        request.POST or None,
        initial=initial_of(preset) if preset else None,
        models=models,
        tools=tools,
        projects=[(str(p.pk), p.name) for p in request.user.projects.all()],
        documents=[(str(d.pk), d.title) for d in list_documents(user=request.user)[:200]],
        staff=request.user.is_staff,
    )
