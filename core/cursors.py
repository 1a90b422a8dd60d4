"""Opaque keyset cursors: the last row's sort values, tied to the order they came from."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from .errors import Invalid

BAD_CURSOR = gettext_noop("The cursor is not valid for this query; start again without it.")


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
        raise Invalid(_(BAD_CURSOR), code="bad_cursor") from None
    if found_key != key or not isinstance(values, list):
        raise Invalid(_(BAD_CURSOR), code="bad_cursor")
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
            raise Invalid(_(BAD_CURSOR), code="bad_cursor") from None
    if value is None or isinstance(value, int | float | str):
        return value
    raise Invalid(_(BAD_CURSOR), code="bad_cursor")
