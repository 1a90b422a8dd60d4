"""Writes of presets: create, change, delete (SPEC "Presets"); publishing is audited."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from audit.models import AuditEntry
from audit.services import record
from core.errors import Invalid
from core.models_on_offer import check_model
from knowledge.models import Document
from toolbox.servers import list_servers
from toolbox.tool_catalog import check_ids

from .models import Preset
from .schemas import Knowledge, PresetIn
from .selectors import access_preset


@transaction.atomic
def create_preset(*, user: Any, data: PresetIn) -> Preset:
    """Create a preset owned by `user` (only staff may share it)."""
    fields = _checked(user, data.model_dump(exclude_unset=False))
    preset = Preset.objects.create(owner=user, **fields)
    if preset.shared:
        record_sharing(user, preset)
    return preset


@transaction.atomic
def update_preset(*, user: Any, preset_id: Any, changes: dict[str, Any]) -> Preset:
    """Change the user's own preset; new turns of its conversations follow the change."""
    preset = access_preset(user=user, preset_id=preset_id, editable=True)
    was_shared = preset.shared
    merged = {"knowledge": Knowledge(scope=preset.knowledge_scope, ids=preset.knowledge_ids)}
    merged |= {"shared": preset.shared} | changes
    checked = _checked(user, merged, only=set(changes), was_shared=was_shared)
    for field, value in checked.items():
        setattr(preset, field, value)
    preset.save()
    if preset.shared != was_shared:
        record_sharing(user, preset)
    return preset


@transaction.atomic
def delete_preset(*, user: Any, preset_id: Any) -> None:
    """Delete the user's own preset; its conversations go on with the defaults (the
    database unlinks other users' conversations of a shared one: ON DELETE SET NULL)."""
    preset = access_preset(user=user, preset_id=preset_id, editable=True)
    if preset.shared:
        record(
            actor=user,
            action=AuditEntry.Action.PRESET_UNPUBLISHED,
            target=preset,
            detail={"deleted": True},
        )
    preset.delete()


def _checked(
    user: Any, fields: dict[str, Any], *, only: set[str] | None = None, was_shared: bool = False
) -> dict[str, Any]:
    """Return the model fields of `fields` (named in `only`, else all) after the domain
    rules: a model on offer, tools on offer, the user's own project or documents, sharing
    by staff only and never of someone's own files."""
    wanted = set(fields) if only is None else only
    out: dict[str, Any] = {k: v for k, v in fields.items() if k in wanted and k != "knowledge"}
    if "model" in out:
        out["model"] = check_model(out["model"])
    if out.get("tools") is not None:
        out["tools"] = check_ids(out["tools"], list_servers())
    knowledge = fields.get("knowledge")
    if isinstance(knowledge, dict):
        knowledge = Knowledge(**knowledge)
    if out.get("shared") and not was_shared and not user.is_staff:
        raise Invalid(_("Only staff can share a preset with everyone."))
    if fields.get("shared") and knowledge is not None and knowledge.scope != "all":
        raise Invalid(
            _("A shared preset searches each person's own documents: its knowledge must be “all”.")
        )
    if "knowledge" in wanted and knowledge is not None:
        _check_knowledge(user, knowledge)
        out["knowledge_scope"] = knowledge.scope
        out["knowledge_ids"] = [i if isinstance(i, int) else str(i) for i in knowledge.ids]
    return out


def _check_knowledge(user: Any, knowledge: Knowledge) -> None:
    """Refuse a project or documents that are not the user's (like missing ones)."""
    if knowledge.scope == "project":
        if not user.projects.filter(pk__in=knowledge.ids).exists():
            raise Invalid(_("No such project."))
    elif knowledge.scope == "documents":
        owned = Document.objects.filter(owner_id=user.pk, pk__in=knowledge.ids).count()
        if owned != len(knowledge.ids):
            raise Invalid(_("No such document."))


def record_sharing(user: Any, preset: Preset) -> None:
    """Write that `user` shared `preset` with everyone, or stopped sharing it."""
    action = AuditEntry.Action.PRESET_PUBLISHED
    if not preset.shared:
        action = AuditEntry.Action.PRESET_UNPUBLISHED
    record(actor=user, action=action, target=preset, detail={"name": preset.name})
