"""Endpoints on prompts: list, create, read, change, delete (SPEC "…prompts…")."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from ninja import Router, Status

from core.schemas import errors

from . import selectors, services, transfer
from .schemas import PromptIn, PromptOut, PromptPage, PromptPatchIn
from .transfer import PromptsFileIn, PromptsImportOut

router = Router(tags=["prompts"])
ERRORS = errors(400, 401, 403, 404, 409, 422, 429)


@router.get("/prompts", response={200: PromptPage, **ERRORS})
def list_prompts(request: HttpRequest):
    """List the prompts you may use: yours first, then those shared with everyone."""
    user = request.auth
    return {"items": [PromptOut.of(p, user_id=user.pk) for p in selectors.visible_to(user)]}


@router.post("/prompts", response={201: PromptOut, **ERRORS})
def create_prompt(request: HttpRequest, payload: PromptIn):
    """Save a prompt (`shared`: staff only); a command you already use is 409."""
    prompt = services.create_prompt(user=request.auth, data=payload)
    return Status(201, PromptOut.of(prompt, user_id=request.auth.pk))


@router.get("/prompts/export", response={200: PromptsFileIn, **ERRORS})
def export_prompts(request: HttpRequest):
    """Your own prompts as a file (`prompts.json`), for `POST /prompts/import`."""
    data = transfer.export_prompts(user=request.auth)
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="{transfer.FILENAME}"'
    return response


@router.post("/prompts/import", response={200: PromptsImportOut, **ERRORS})
def import_prompts(request: HttpRequest, payload: PromptsFileIn):
    """Add a prompts file's prompts (yours, private); a command you already use is skipped."""
    return transfer.import_prompts(user=request.auth, data=payload)


@router.get("/prompts/{prompt_id}", response={200: PromptOut, **ERRORS})
def get_prompt(request: HttpRequest, prompt_id: str):
    """Read a prompt: yours, or one shared with everyone."""
    prompt = selectors.access_prompt(user=request.auth, prompt_id=prompt_id)
    return PromptOut.of(prompt, user_id=request.auth.pk)


@router.patch("/prompts/{prompt_id}", response={200: PromptOut, **ERRORS})
def update_prompt(request: HttpRequest, prompt_id: str, payload: PromptPatchIn):
    """Change your prompt (a shared one of someone else: 403)."""
    changes = payload.model_dump(exclude_unset=True)
    prompt = services.update_prompt(user=request.auth, prompt_id=prompt_id, changes=changes)
    return PromptOut.of(prompt, user_id=request.auth.pk)


@router.delete("/prompts/{prompt_id}", response={204: None, **ERRORS})
def delete_prompt(request: HttpRequest, prompt_id: str):
    """Delete your prompt."""
    services.delete_prompt(user=request.auth, prompt_id=prompt_id)
    return Status(204, None)
