"""Opaque keyset cursors: the last row's sort values, tied to the order they came from."""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from datetime import UTC, datetime
from typing import Any

from django.db.models import Q

from .errors import Invalid
from .ids import parse_uuid

BAD_CURSOR = "The cursor is not valid for this query; start again without it."


def encode_cursor(*, key: str, values: list[Any]) -> str:
    """Return an opaque cursor for the row whose sort values are `values`."""
    payload = [key, [_dump(value) for value in values]]
    raw = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, *, key: str) -> list[Any]:
    """Return the sort values of `cursor`; refuse one made for another order."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        found_key, values = json.loads(raw)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise Invalid(BAD_CURSOR, code="bad_cursor") from None
    if found_key != key or not isinstance(values, list):
        raise Invalid(BAD_CURSOR, code="bad_cursor")
    return [_load(value) for value in values]


def _dump(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"t": value.isoformat()}
    if value is None or isinstance(value, int | float | str):
        return value
    return str(value)


def _load(value: Any) -> Any:
    if isinstance(value, dict):
        try:
            return datetime.fromisoformat(value["t"])
        except (KeyError, TypeError, ValueError):
            raise Invalid(BAD_CURSOR, code="bad_cursor") from None
    if value is None or isinstance(value, int | float | str):
        return value
    raise Invalid(BAD_CURSOR, code="bad_cursor")


def after_keyset(*, field: str, value: Any, pk: Any, descending: bool, nullable: bool) -> Q:
    """Return the rows that come after (`value`, `pk`) in the order (field, id).

    NULLs (a conversation without messages has no `last_message_at`) come last in both
    orders, as the list's ordering puts them (`nulls_last`).
    """
    op = "lt" if descending else "gt"
    if value is None:
        return Q(**{f"{field}__isnull": True, f"pk__{op}": pk})
    # The redundant `<=` / `>=` bound lets PostgreSQL use it as an index condition.
    bound = Q(**{f"{field}__{op}e": value})
    rest = Q(**{f"{field}__{op}": value}) | Q(**{field: value, f"pk__{op}": pk})
    condition = bound & rest
    if nullable:
        condition |= Q(**{f"{field}__isnull": True})
    return condition


def decode_keyset(
    cursor: str, *, key: str, kind: type | tuple[type, ...], nullable: bool = False
) -> tuple[Any, uuid.UUID]:
    """Return (sort value, row id) of a keyset cursor, refusing any tampered content.

    The value must be of `kind` (None only when `nullable`; datetimes with a time zone
    and within what the database stores), the id a UUID.
    """
    values = decode_cursor(cursor, key=key)
    if len(values) != 2:
        raise Invalid(BAD_CURSOR, code="bad_cursor")
    value, pk = values[0], parse_uuid(values[1])
    if pk is None:
        raise Invalid(BAD_CURSOR, code="bad_cursor")
    if value is None and nullable:
        return None, pk
    if isinstance(value, bool) or not isinstance(value, kind):
        raise Invalid(BAD_CURSOR, code="bad_cursor")
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise Invalid(BAD_CURSOR, code="bad_cursor")
        try:
            value = value.astimezone(UTC)
        except (OverflowError, ValueError):
            raise Invalid(BAD_CURSOR, code="bad_cursor") from None
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        raise Invalid(BAD_CURSOR, code="bad_cursor")
    return value, pk
