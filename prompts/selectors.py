"""Reads of prompts: the ones a user may use (theirs, then the shared ones)."""

from __future__ import annotations

from typing import Any

from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from django.utils.translation import gettext as _

from core.errors import Forbidden, NotFound
from core.ids import parse_uuid

from .models import Prompt


def visible_to(user: Any) -> QuerySet[Prompt]:
    """The prompts `user` may use: their own first, then those shared with everyone (the
    owner check is here as well as in row-level security: SQLite has none)."""
    mine = ExpressionWrapper(Q(owner_id=user.pk), output_field=BooleanField())
    return (
        Prompt.objects.filter(Q(owner_id=user.pk) | Q(shared=True))
        .annotate(mine=mine)
        .order_by("-mine", "command", "id")
    )


def access_prompt(*, user: Any, prompt_id: Any, editable: bool = False) -> Prompt:
    """Return a prompt `user` may use; someone else's private one answers like a missing
    one. With `editable`, a shared prompt of someone else raises Forbidden."""
    pk = parse_uuid(prompt_id)
    found = visible_to(user).filter(pk=pk).first() if pk is not None else None
    if found is None:
        raise NotFound(_("No such prompt."))
    if editable and found.owner_id != user.pk:
        raise Forbidden(_("This prompt is shared with you: only its owner can change it."))
    return found
