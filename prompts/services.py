"""Writes of prompts: create, change, delete; sharing is for staff and audited."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from audit.models import AuditEntry
from audit.services import record
from core.errors import Conflict, Invalid, editable_changes
from core.user_turns import hold_user

from .models import MAX_PROMPTS, Prompt
from .schemas import PromptIn
from .selectors import access_prompt

EDITABLE_FIELDS = frozenset({"command", "title", "content", "shared"})


@transaction.atomic
def create_prompt(*, user: Any, data: PromptIn) -> Prompt:
    """Create a prompt owned by `user` (only staff may share it; a command once per owner)."""
    if data.shared and not user.is_staff:
        raise Invalid(_("Only staff can share a prompt with everyone."))
    hold_user(user.pk)
    if Prompt.objects.filter(owner_id=user.pk).count() >= MAX_PROMPTS:
        raise Invalid(
            _("You have %(n)s prompts, the most one person may keep.") % {"n": MAX_PROMPTS}
        )
    prompt = Prompt(owner=user, **data.model_dump())
    _save(prompt)
    if prompt.shared:
        record_sharing(user, prompt)
    return prompt


@transaction.atomic
def update_prompt(*, user: Any, prompt_id: Any, changes: dict[str, Any]) -> Prompt:
    """Change the user's own prompt."""
    cleaned = editable_changes(changes, EDITABLE_FIELDS)
    prompt = access_prompt(user=user, prompt_id=prompt_id, editable=True)
    was_shared = prompt.shared
    if cleaned.get("shared") and not was_shared and not user.is_staff:
        raise Invalid(_("Only staff can share a prompt with everyone."))
    for field, value in cleaned.items():
        setattr(prompt, field, value)
    _save(prompt)
    if prompt.shared != was_shared:
        record_sharing(user, prompt)
    return prompt


@transaction.atomic
def delete_prompt(*, user: Any, prompt_id: Any, actor: Any = None) -> None:
    """Delete the user's own prompt (`actor`: staff deleting it in the admin, if not them)."""
    prompt = access_prompt(user=user, prompt_id=prompt_id, editable=True)
    if prompt.shared:
        record(
            actor=actor or user,
            action=AuditEntry.Action.PROMPT_UNPUBLISHED,
            target=prompt,
            detail={"deleted": True},
        )
    prompt.delete()


def _save(prompt: Prompt) -> None:
    """Save, answering a command the owner already uses with Conflict (nothing saved)."""
    try:
        with transaction.atomic():
            prompt.save()
    except IntegrityError:
        raise Conflict(
            _("You already have a prompt /%(command)s.") % {"command": prompt.command}
        ) from None


def record_sharing(user: Any, prompt: Prompt) -> None:
    """Write that `user` shared `prompt` with everyone, or stopped sharing it."""
    action = (
        AuditEntry.Action.PROMPT_PUBLISHED
        if prompt.shared
        else AuditEntry.Action.PROMPT_UNPUBLISHED
    )
    record(actor=user, action=action, target=prompt, detail={"command": prompt.command})
