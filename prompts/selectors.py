"""Reads of prompts: the ones a user may use (theirs, then the shared ones)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy

from core.shared_rows import SharedRows

from .models import Prompt

PROMPTS = SharedRows(
    Prompt,
    "command",
    missing=gettext_lazy("No such prompt."),
    forbidden=gettext_lazy("This prompt is shared with you: only its owner can change it."),
)
visible_to = PROMPTS.visible_to


def access_prompt(*, user: Any, prompt_id: Any, editable: bool = False) -> Prompt:
    """A prompt `user` may use (NotFound, or Forbidden with `editable`: SharedRows.get)."""
    return PROMPTS.get(user=user, object_id=prompt_id, editable=editable)
