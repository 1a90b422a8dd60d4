"""Endpoints on presets: list, create, read, change, delete (SPEC "Presets")."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from core.schemas import errors

from . import selectors, services
from .schemas import PresetIn, PresetOut, PresetPage, PresetPatchIn

router = Router(tags=["presets"])
ERRORS = errors(400, 401, 403, 404, 422, 429)


@router.get("/presets", response={200: PresetPage, **ERRORS})
def list_presets(request: HttpRequest):
    """List the presets you may use: yours first, then those shared with everyone."""
    user = request.auth
    items = [PresetOut.of(p, user_id=user.pk) for p in selectors.visible_to(user)]
    return {"items": items, "next_cursor": None}


@router.post("/presets", response={201: PresetOut, **ERRORS})
def create_preset(request: HttpRequest, payload: PresetIn):
    """Create a preset (`shared`: staff only; a shared preset's knowledge is "all")."""
    preset = services.create_preset(user=request.auth, data=payload)
    return Status(201, PresetOut.of(preset, user_id=request.auth.pk))


@router.get("/presets/{preset_id}", response={200: PresetOut, **ERRORS})
def get_preset(request: HttpRequest, preset_id: str):
    """Read a preset: yours, or one shared with everyone."""
    preset = selectors.access_preset(user=request.auth, preset_id=preset_id)
    return PresetOut.of(preset, user_id=request.auth.pk)


@router.patch("/presets/{preset_id}", response={200: PresetOut, **ERRORS})
def update_preset(request: HttpRequest, preset_id: str, payload: PresetPatchIn):
    """Change your preset (a shared one of someone else: 403); new turns follow it."""
    changes = payload.model_dump(exclude_unset=True)
    preset = services.update_preset(user=request.auth, preset_id=preset_id, changes=changes)
    return PresetOut.of(preset, user_id=request.auth.pk)


@router.delete("/presets/{preset_id}", response={204: None, **ERRORS})
def delete_preset(request: HttpRequest, preset_id: str):
    """Delete your preset; conversations started from it go on with the defaults."""
    services.delete_preset(user=request.auth, preset_id=preset_id)
    return Status(204, None)
