"""Errors that services and selectors raise; views, the API and consumers map them."""

from __future__ import annotations


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


class LlmUnavailable(ServiceError):
    """The model server failed or could not be reached; nothing was changed."""

    code = "llm_unavailable"
    status = 503
