"""Rows a user owns, that staff may share with everyone (presets, prompts): the reads."""

from __future__ import annotations

from typing import Any, TypeVar

from django.db.models import BooleanField, ExpressionWrapper, Model, Q, QuerySet

from .errors import Forbidden, NotFound
from .ids import parse_uuid

M = TypeVar("M", bound=Model)


def own_and_shared(model: type[M], user: Any, *order: str) -> QuerySet[M]:
    """`user`'s own rows first, then those shared with everyone, each group by `order`
    (the owner check is here as well as in row-level security: SQLite has none)."""
    mine = ExpressionWrapper(Q(owner_id=user.pk), output_field=BooleanField())
    rows = model._default_manager.filter(Q(owner_id=user.pk) | Q(shared=True))
    return rows.annotate(mine=mine).order_by("-mine", *order, "id")


def one_of(
    rows: QuerySet[M], *, user: Any, object_id: Any, editable: bool, missing: str, forbidden: str
) -> M:
    """The row `object_id` among `rows`; NotFound (`missing`) for any other id, someone
    else's private row included. With `editable`, a shared row of someone else is
    Forbidden (`forbidden`)."""
    pk = parse_uuid(object_id)
    found = rows.filter(pk=pk).first() if pk is not None else None
    if found is None:
        raise NotFound(missing)
    if editable and found.owner_id != user.pk:  # type: ignore[attr-defined]
        raise Forbidden(forbidden)
    return found
