"""Errors that services and selectors raise; views, the API and consumers map them."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.utils.translation import gettext as _


class ServiceError(Exception):
    """A request that cannot be carried out; nothing was changed.

    A subclass names its SPEC error code and HTTP status in its bases:
    `class NotFound(ServiceError, code="not_found", status=404)`.
    """

    code = "invalid"
    status = 400

    def __init_subclass__(cls, *, code: str | None = None, status: int | None = None) -> None:
        super().__init_subclass__()
        if code:
            cls.code = code
        if status:
            cls.status = status

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code


class NotFound(ServiceError, code="not_found", status=404):
    """No such object, or not the user's (the same answer, so ids reveal nothing)."""


class Invalid(ServiceError, code="invalid", status=422):
    """The request's values are wrong; the message says which."""


class Forbidden(ServiceError, code="forbidden", status=403):
    """The user may see the object but not change it (a preset shared with them)."""


class Conflict(ServiceError, code="conflict", status=409):
    """The object's state does not allow it now (a reply already running, a stale edit)."""


class TooLarge(ServiceError, code="too_long", status=413):
    """Over a size limit (a message, a file, an import)."""


class RateLimited(ServiceError, code="rate_limited", status=429):
    """Too many requests; `retry_after`: seconds until the next is allowed."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BudgetExceeded(RateLimited, code="budget_exceeded"):
    """The user's monthly token budget is used up; `retry_after`: seconds until it resets."""


class SensitiveInfo(ServiceError, code="sensitive", status=409):
    """A message holds sensitive information (SPEC "Sensitive information"); nothing stored.

    `findings` are `{kind, start, end}` (character offsets); `can_confirm` says whether a
    resend with `confirm_sensitive` may store it (`warn`) or not (`block`).
    """

    def __init__(self, message: str, *, findings: list[dict[str, object]], can_confirm: bool):
        super().__init__(message)
        self.findings = findings
        self.can_confirm = can_confirm


class LlmUnavailable(ServiceError, code="llm_unavailable", status=503):
    """The model server failed or could not be reached; nothing was changed."""


def editable_changes(changes: Mapping[str, Any], editable: Collection[str]) -> dict[str, Any]:
    """A service's `**changes`, as a dict to clean; Invalid names any field not `editable`."""
    unknown = set(changes) - set(editable)
    if unknown:
        raise Invalid(_("Unknown field: %(names)s.") % {"names": ", ".join(sorted(unknown))})
    return dict(changes)


@contextmanager
def page_errors() -> Iterator[None]:
    """For a page: an object refused with Forbidden is Django's 403, NotFound its 404."""
    try:
        yield
    except Forbidden as exc:
        raise PermissionDenied(exc.message) from None
    except NotFound as exc:
        raise Http404(exc.message) from None


def error_response(status: int, code: str, message: str, **headers: str) -> JsonResponse:
    """Answer with SPEC's error shape."""
    response = JsonResponse(
        {"error": {"code": code, "message": message}},
        status=status,
        json_dumps_params={"ensure_ascii": False},
    )
    for name, value in headers.items():
        response[name] = value
    return response
