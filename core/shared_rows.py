"""Rows a user owns, that staff may share with everyone (presets, prompts): the reads."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, Self, TypeVar

from django.db.models import BooleanField, ExpressionWrapper, Model, Q, QuerySet
from ninja import Schema

from .errors import Forbidden, NotFound
from .ids import parse_uuid

M = TypeVar("M", bound=Model)


class SharedRows(Generic[M]):
    """The reads of one model whose rows have an `owner` and a `shared` flag; `missing`
    and `forbidden` are its refusals' words (lazy translations)."""

    def __init__(self, model: type[M], *order: str, missing: Any, forbidden: Any) -> None:
        self.model, self.order = model, order
        self.missing, self.forbidden = missing, forbidden

    def visible_to(self, user: Any) -> QuerySet[M]:
        """`user`'s own rows first, then those shared with everyone, each group in order
        (the owner check is here as well as in row-level security: SQLite has none)."""
        mine = ExpressionWrapper(Q(owner_id=user.pk), output_field=BooleanField())
        rows = self.model._default_manager.filter(Q(owner_id=user.pk) | Q(shared=True))
        return rows.annotate(mine=mine).order_by("-mine", *self.order, "id")

    def get(self, *, user: Any, object_id: Any, editable: bool = False) -> M:
        """The row `object_id` if `user` may see it; NotFound for any other id, someone
        else's private row included. With `editable`, a shared row of someone else is
        Forbidden."""
        pk = parse_uuid(object_id)
        found = self.visible_to(user).filter(pk=pk).first() if pk is not None else None
        if found is None:
            raise NotFound(str(self.missing))
        if editable and found.owner_id != user.pk:  # type: ignore[attr-defined]
            raise Forbidden(str(self.forbidden))
        return found


class SharedRowOut(Schema):
    """How the API shows a shared row to `user_id` (`of`): its id, whether it is shared with
    everyone and whether it is the reader's own; subclasses add the row's own fields."""

    id: str
    shared: bool
    owner_is_me: bool
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, row: Any, *, user_id: int) -> Self:
        """Return `row` as the user `user_id` sees it: its own fields, and `fields_of`'s."""
        data = {name: getattr(row, name) for name in cls.model_fields if hasattr(row, name)}
        data |= {"id": str(row.pk), "owner_is_me": row.owner_id == user_id}
        return cls.model_validate(data | cls.fields_of(row))

    @classmethod
    def fields_of(cls, row: Any) -> dict[str, Any]:
        """The fields a subclass builds from more than one column (none here)."""
        return {}
