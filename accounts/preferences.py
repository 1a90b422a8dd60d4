"""Each user's chat settings: the default model, custom instructions, memory, tools."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from core.errors import editable_changes
from core.models_on_offer import check_model
from toolbox.servers import list_servers
from toolbox.tool_catalog import check_ids, enabled_ids

from .models import UserSettings

EDITABLE_FIELDS = {
    "default_model",
    "custom_instructions",
    "memory_enabled",
    "tools_enabled",
    "theme",
}


def get_user_settings(*, user: Any) -> UserSettings:
    """Return the user's settings (unsaved defaults when they never changed any)."""
    found = UserSettings.objects.filter(user_id=user.pk).first()
    return found if found is not None else UserSettings(user_id=user.pk)


@transaction.atomic
def update_user_settings(*, user: Any, **changes: Any) -> UserSettings:
    """Change the default model, custom instructions, memory and/or the tools on by default
    (typed at the edge: `UserSettingsPatchIn`); the model and the tools must be on offer."""
    cleaned = editable_changes(changes, EDITABLE_FIELDS)
    if "default_model" in changes:
        cleaned["default_model"] = check_model(changes["default_model"])
    if "tools_enabled" in changes:
        cleaned["tools_enabled"] = check_ids(changes["tools_enabled"], list_servers())
    found, _created = UserSettings.objects.select_for_update().get_or_create(user_id=user.pk)
    for field, value in cleaned.items():
        setattr(found, field, value)
    found.save()
    return found


def theme_of(user: Any) -> str:
    """Return the theme a user chose for every page ("light", "dark"), or "" (the device's)."""
    chosen = UserSettings.objects.filter(user_id=user.pk).values_list("theme", flat=True).first()
    return "" if chosen in (None, UserSettings.theme.field.default) else chosen


def user_settings_to_dict(found: UserSettings) -> dict[str, Any]:
    """Return the settings as the API shows them."""
    return {
        "default_model": found.default_model,
        "custom_instructions": found.custom_instructions,
        "memory_enabled": found.memory_enabled,
        "tools_enabled": enabled_ids(conversation_tools=None, user_tools=found.tools_enabled),
        "theme": found.theme,
        # What this site offers, not a choice of the user's (SPEC "Voice…").
        "stt": bool(settings.CHAT_STT_MODEL),
        "tts": bool(settings.CHAT_TTS_MODEL),
    }
