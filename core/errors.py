"""Errors that services and selectors raise; views, the API and consumers map them."""

from __future__ import annotations

from django.http import JsonResponse


class ServiceError(Exception):
    """A request that cannot be carried out; nothing was changed."""

    code = "invalid"
    status = 400

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code


class NotFound(ServiceError):
    code = "not_found"
    status = 404


class Invalid(ServiceError):
    code = "invalid"
    status = 422


class Forbidden(ServiceError):
    """The user may see the object but not change it (a preset shared with them)."""

    code = "forbidden"
    status = 403


class Conflict(ServiceError):
    code = "conflict"
    status = 409


class TooLarge(ServiceError):
    code = "too_long"
    status = 413


class RateLimited(ServiceError):
    code = "rate_limited"
    status = 429

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BudgetExceeded(RateLimited):
    """The user's monthly token budget is used up; `retry_after`: seconds until it resets."""

    code = "budget_exceeded"


class SensitiveInfo(ServiceError):
    """A message holds sensitive information (SPEC "Sensitive information"); nothing stored.

    `findings` are `{kind, start, end}` (character offsets); `can_confirm` says whether a
    resend with `confirm_sensitive` may store it (`warn`) or not (`block`).
    """

    code = "sensitive"
    status = 409

    def __init__(self, message: str, *, findings: list[dict[str, object]], can_confirm: bool):
        super().__init__(message)
        self.findings = findings
        self.can_confirm = can_confirm


class LlmUnavailable(ServiceError):
    """The model server failed or could not be reached; nothing was changed."""

    code = "llm_unavailable"
    status = 503


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
