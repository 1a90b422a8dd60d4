"""Each user's chat settings: the default model and custom instructions."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from core.errors import Invalid
from core.llm_catalog import check_model

from .models import UserSettings

INSTRUCTIONS_MAX_CHARS = 8000
EDITABLE_FIELDS = {"default_model", "custom_instructions", "memory_enabled"}


def get_user_settings(*, user: Any) -> UserSettings:
    """Return the user's settings (unsaved defaults when they never changed any)."""
    found = UserSettings.objects.filter(user_id=user.pk).first()
    return found if found is not None else UserSettings(user_id=user.pk)


@transaction.atomic
def update_user_settings(*, user: Any, **changes: Any) -> UserSettings:
    """Change the default model, custom instructions and/or memory; validate all first."""
    unknown = set(changes) - EDITABLE_FIELDS
    if unknown:
        raise Invalid(f"Unknown field: {', '.join(sorted(unknown))}.")
    cleaned: dict[str, Any] = {}
    if "default_model" in changes:
        model = changes["default_model"]
        if not isinstance(model, str):
            raise Invalid("default_model must be a string (blank: the site's default).")
        cleaned["default_model"] = check_model(model.strip())
    if "custom_instructions" in changes:
        text = changes["custom_instructions"]
        if not isinstance(text, str) or len(text) > INSTRUCTIONS_MAX_CHARS:
            raise Invalid(
                f"Custom instructions are text of at most {INSTRUCTIONS_MAX_CHARS} characters."
            )
        cleaned["custom_instructions"] = text
    if "memory_enabled" in changes:
        if not isinstance(changes["memory_enabled"], bool):
            raise Invalid("memory_enabled is true or false.")
        cleaned["memory_enabled"] = changes["memory_enabled"]
    found, _created = UserSettings.objects.select_for_update().get_or_create(user_id=user.pk)
    for field, value in cleaned.items():
        setattr(found, field, value)
    found.save()
    return found


def user_settings_to_dict(found: UserSettings) -> dict[str, Any]:
    """Return the settings as the API shows them."""
    return {
        "default_model": found.default_model,
        "custom_instructions": found.custom_instructions,
        "memory_enabled": found.memory_enabled,
    }
