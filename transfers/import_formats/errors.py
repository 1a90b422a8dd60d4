"""The refusal of an import: a file, or one conversation of it, this app cannot read."""

from __future__ import annotations

from core.errors import ServiceError


class InvalidImport(ServiceError, code="invalid_import", status=400):
    """The file is not an export this app reads; the message says what was wrong."""
