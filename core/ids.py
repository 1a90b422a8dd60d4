"""Identifiers from the outside world."""

from __future__ import annotations

import uuid
from typing import Any


def parse_uuid(value: Any) -> uuid.UUID | None:
    """Return `value` as a UUID, or None when it is not one."""
    if isinstance(value, uuid.UUID):
        return value
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        return None
