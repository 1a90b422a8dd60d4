"""Reads of presets: the ones a user may see (theirs and the shared ones)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from core.ids import parse_uuid
from core.shared_rows import one_of, own_and_shared

from .models import Preset


def visible_to(user: Any) -> QuerySet[Preset]:
    """Return the presets `user` may use: their own first, then those shared with everyone."""
    return own_and_shared(Preset, user, "name")


def access_preset(*, user: Any, preset_id: Any, editable: bool = False) -> Preset:
    """Return a preset `user` may use; someone else's private one answers like a missing
    one. With `editable`, a shared preset of someone else raises Forbidden."""
    return one_of(
        visible_to(user),
        user=user,
        object_id=preset_id,
        editable=editable,
        missing=_("No such preset."),
        forbidden=_("This preset is shared with you: only its owner can change it."),
    )


def find_visible(*, user: Any, preset_id: Any) -> Preset | None:
    """Return the preset if `user` may use it, else None (for pages that show a link)."""
    pk = parse_uuid(preset_id)
    return visible_to(user).filter(pk=pk).first() if pk is not None else None


@dataclass(frozen=True)
class PresetSettings:
    """What a preset sets for each turn of its conversations."""

    name: str
    instructions: str
    model: str
    temperature: float | None
    tools: list[str] | None
    knowledge_scope: str
    knowledge_ids: tuple[str, ...]


# A conversation without a preset: nothing set, every default applies.
NO_PRESET = PresetSettings(
    name="",
    instructions="",
    model="",
    temperature=None,
    tools=None,
    knowledge_scope="all",
    knowledge_ids=(),
)


def settings_of(preset_id: Any, *, user_id: Any) -> PresetSettings | None:
    """Return the settings of preset `preset_id` for a turn of user `user_id` (None: gone,
    or no longer shared with them). The owner check is here, not only in row-level
    security: SQLite has none."""
    visible = Preset.objects.filter(Q(owner_id=user_id) | Q(shared=True))
    found = visible.filter(pk=preset_id).first() if preset_id else None
    if found is None:
        return None
    return PresetSettings(
        name=found.name,
        instructions=found.instructions,
        model=found.model,
        temperature=found.temperature,
        tools=found.tools,
        knowledge_scope=found.knowledge_scope,
        knowledge_ids=tuple(str(i) for i in found.knowledge_ids),
    )
