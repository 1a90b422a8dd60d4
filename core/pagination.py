"""Keyset pages: a compound sort key, an opaque cursor, and limit + 1 rows read to know
whether there is more.

A sort key is its fields, then the row's primary key to break ties, all in one
direction; a nullable field's NULLs come last in both directions (a conversation without
messages has no `last_message_at`). The cursor holds the last row's values of those
fields and its id, tied to the order it came from (core/cursors.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from django.core.exceptions import ValidationError
from django.db.models import F, Model, OrderBy, Q, QuerySet
from django.utils.translation import gettext as _

from .cursors import BAD_CURSOR, decode_cursor, encode_cursor
from .errors import Invalid

T = TypeVar("T")
M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class KeyField:
    """One field of a sort key: its name, the types its cursor value may have, NULLs."""

    name: str
    kind: type | tuple[type, ...]
    nullable: bool = False


@dataclass(frozen=True)
class SortKey:
    """A compound sort key: `fields`, then the primary key, all ascending or descending."""

    fields: tuple[KeyField, ...]
    descending: bool = False


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list and the cursor of the next (None on the last page)."""

    items: list[T]
    next_cursor: str | None


def paginate(
    queryset: QuerySet[M], *, sort: SortKey, cursor: str | None, limit: int, key: str
) -> Page[M]:
    """Return the `limit` (at least 1) rows of `queryset` that follow `cursor` in `sort`'s order.

    `key` names the order the cursor belongs to; a cursor made under another key, or
    tampered with, is refused (Invalid, code "bad_cursor").
    """
    pk = queryset.model._meta.pk
    if cursor:
        values = _decode(cursor, sort=sort, key=key, pk_field=pk)
        names = _names(sort, pk.name)
        queryset = queryset.filter(_after(names, values, descending=sort.descending))
    rows = list(queryset.order_by(*_ordering(sort, pk.name))[: limit + 1])
    if len(rows) <= limit:
        return Page(items=rows, next_cursor=None)
    rows = rows[:limit]
    last = rows[-1]
    last_values = [getattr(last, field.name) for field in sort.fields] + [str(last.pk)]
    return Page(items=rows, next_cursor=encode_cursor(key=key, values=last_values))


def _names(sort: SortKey, pk_name: str) -> list[tuple[str, bool]]:
    """Return the sort key's (field name, nullable) pairs, the primary key last."""
    return [(field.name, field.nullable) for field in sort.fields] + [(pk_name, False)]


def _ordering(sort: SortKey, pk_name: str) -> list[OrderBy]:
    """Return the ORDER BY of `sort`: its fields (NULLs last where nullable), then the pk."""
    # NULLS LAST only where nullable: on a NOT NULL column `DESC NULLS LAST` keeps
    # PostgreSQL from reading a (owner, field DESC, id DESC) index in order; it sorts.
    return [
        OrderBy(F(name), descending=sort.descending, nulls_last=True if nullable else None)
        for name, nullable in _names(sort, pk_name)
    ]


def _after(names: Sequence[tuple[str, bool]], values: Sequence[Any], *, descending: bool) -> Q:
    """Return the rows that come after `values` in the order of `names` (NULLs last)."""
    (name, nullable), value = names[0], values[0]
    if value is None:  # only NULLs follow a NULL, ordered by the rest of the key
        return Q(**{f"{name}__isnull": True}) & _after(names[1:], values[1:], descending=descending)
    op = "lt" if descending else "gt"
    condition = Q(**{f"{name}__{op}": value})
    if len(names) > 1:
        tie = Q(**{name: value}) & _after(names[1:], values[1:], descending=descending)
        # The redundant `<=` / `>=` bound lets PostgreSQL use it as an index condition.
        condition = Q(**{f"{name}__{op}e": value}) & (condition | tie)
    if nullable:
        condition |= Q(**{f"{name}__isnull": True})
    return condition


def _decode(cursor: str, *, sort: SortKey, key: str, pk_field: Any) -> list[Any]:
    """Return the sort values and row id of `cursor`, refusing any tampered content."""
    values = decode_cursor(cursor, key=key)
    if len(values) != len(sort.fields) + 1:
        raise Invalid(_(BAD_CURSOR), code="bad_cursor")
    checked = [
        _checked(value, field) for value, field in zip(values[:-1], sort.fields, strict=True)
    ]
    return [*checked, _checked_pk(values[-1], pk_field)]


def _checked(value: Any, field: KeyField) -> Any:
    """Return `value` if it is of the field's kind (None only when nullable; datetimes
    with a time zone and within what the database stores, as UTC; 64-bit integers)."""
    if value is None and field.nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, field.kind):
        raise Invalid(_(BAD_CURSOR), code="bad_cursor")
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise Invalid(_(BAD_CURSOR), code="bad_cursor")
        try:
            value = value.astimezone(UTC)
        except (OverflowError, ValueError):
            raise Invalid(_(BAD_CURSOR), code="bad_cursor") from None
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        raise Invalid(_(BAD_CURSOR), code="bad_cursor")
    return value


def _checked_pk(value: Any, pk_field: Any) -> Any:
    """Return the row id `value` (written as a string) as the primary key field reads it."""
    if not isinstance(value, str) or len(value) > 64:
        raise Invalid(_(BAD_CURSOR), code="bad_cursor")
    try:
        pk = pk_field.to_python(value)
    except ValidationError:
        raise Invalid(_(BAD_CURSOR), code="bad_cursor") from None
    if pk is None or (isinstance(pk, int) and not -(2**63) <= pk < 2**63):
        raise Invalid(_(BAD_CURSOR), code="bad_cursor")
    return pk
