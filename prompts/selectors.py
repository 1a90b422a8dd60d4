"""Reads of prompts: the ones a user may use (theirs, then the shared ones)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from core.shared_rows import one_of, own_and_shared

from .models import Prompt


def visible_to(user: Any) -> QuerySet[Prompt]:
    """The prompts `user` may use: their own first, then those shared with everyone."""
    return own_and_shared(Prompt, user, "command")


def access_prompt(*, user: Any, prompt_id: Any, editable: bool = False) -> Prompt:
    """Return a prompt `user` may use; someone else's private one answers like a missing
    one. With `editable`, a shared prompt of someone else raises Forbidden."""
    return one_of(
        visible_to(user),
        user=user,
        object_id=prompt_id,
        editable=editable,
        missing=_("No such prompt."),
        forbidden=_("This prompt is shared with you: only its owner can change it."),
    )
