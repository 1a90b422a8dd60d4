"""Reads of presets: the ones a user may see (theirs and the shared ones)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from django.utils.translation import gettext_lazy

from core.ids import parse_uuid
from core.shared_rows import SharedRows

from .models import Preset

PRESETS = SharedRows(
    Preset,
    "name",
    missing=gettext_lazy("No such preset."),
    forbidden=gettext_lazy("This preset is shared with you: only its owner can change it."),
)
visible_to = PRESETS.visible_to


def access_preset(*, user: Any, preset_id: Any, editable: bool = False) -> Preset:
    """A preset `user` may use (NotFound, or Forbidden with `editable`: SharedRows.get)."""
    return PRESETS.get(user=user, object_id=preset_id, editable=editable)


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
