"""The API root's shared parts: session auth with CSRF, the body parser, SPEC's error shape.

The project assembles the one `NinjaAPI` (chatsite/api.py) from `build_api` and the
routers of each app; this module imports no feature app.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.utils.translation import gettext as _
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser
from ninja.security import APIKeyCookie
from ninja.utils import check_csrf

from core.schemas import describe_error

from . import schemas
from .errors import RateLimited, SensitiveInfo, ServiceError, error_response
from .unavailable import unavailable_for

logger = logging.getLogger(__name__)

SAFE_METHODS = {"GET", "HEAD", "OPTIONS", "TRACE"}
HTTP_CODES = {
    400: "invalid",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_long",
    422: "invalid",
    429: "rate_limited",
}


class SessionAuth(APIKeyCookie):
    """The browser's session cookie; unsafe methods need the CSRF token as well."""

    param_name: str = settings.SESSION_COOKIE_NAME

    def _get_key(self, request: HttpRequest) -> str | None:
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any | None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        if request.method not in SAFE_METHODS and check_csrf(request) is not None:
            raise HttpError(403, _("CSRF check failed: send the X-CSRFToken header."))
        return user


class BodyParser(Parser):
    """JSON bodies; an empty form body (a bare POST from a browser or curl) reads as {}.

    JSON is read by `core.schemas.loads`: NaN, Infinity, out-of-range numbers and deep
    nesting are refused here, before any schema sees the body.
    """

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        if request.content_type != "application/json" and not request.body.strip(b"-\r\n "):
            return {}
        if request.content_type == "multipart/form-data" and not request.POST:
            return {}
        try:
            return schemas.loads(request.body)
        except ValueError as exc:
            raise HttpError(
                400, (_("The body is not valid JSON: %(problem)s") % {"problem": exc})[:300]
            ) from None


_HANDLERS: list[tuple[type[Exception], Any]] = []


def _handles(exc_class: type[Exception]):
    def register(handler):
        _HANDLERS.append((exc_class, handler))
        return handler

    return register


@_handles(ServiceError)
def on_service_error(request: HttpRequest, exc: ServiceError) -> HttpResponse:
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else {}
    response = error_response(exc.status, exc.code, exc.message, **headers)
    if isinstance(exc, SensitiveInfo):  # where, so that a client can show or mask it
        body = {
            "error": {
                "code": exc.code,
                "message": exc.message,
                "findings": exc.findings,
                "can_confirm": exc.can_confirm,
            }
        }
        response = JsonResponse(body, status=exc.status, json_dumps_params={"ensure_ascii": False})
    return response


def _field_path(error: dict[str, Any]) -> tuple[Any, ...]:
    """The field as the client named it: django-ninja's loc begins with where the value came
    from ("body", "query", "path") and, for a body, the view's parameter ("payload")."""
    source, *path = error.get("loc") or ("",)
    return tuple(path[1:] if source == "body" else path)


@_handles(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    problems = [describe_error({**error, "loc": _field_path(error)}) for error in exc.errors[:5]]
    return error_response(422, "invalid", "; ".join(problems) or _("Invalid input."))


@_handles(AuthenticationError)
def on_authentication_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return error_response(401, "unauthorized", _("Log in or send a valid Bearer token."))


@_handles(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return error_response(exc.status_code, HTTP_CODES.get(exc.status_code, "error"), str(exc))


@_handles(RequestDataTooBig)
def on_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return error_response(413, "too_long", _("The request body is too large."))


@_handles(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return error_response(404, "not_found", _("Not found."))


@_handles(MultiPartParserError)
def on_bad_multipart(request: HttpRequest, exc: MultiPartParserError) -> HttpResponse:
    return error_response(
        400,
        "invalid",
        (_("The multipart body cannot be read: %(problem)s") % {"problem": exc})[:300],
    )


@_handles(Exception)
def on_unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    # PostgreSQL or Redis out of reach, or a statement out of time: 503, try again later.
    unavailable = unavailable_for(request, exc)
    if unavailable is not None:
        return unavailable
    # The API answers JSON whatever happens (an HTML debug page is no use to a client).
    logger.error("API error on %s %s", request.method, request.path, exc_info=exc)
    return error_response(500, "internal_error", _("Something went wrong on the server."))


def build_api(*, auth: list[Any]) -> NinjaAPI:
    """Return the API object with SPEC's error shape for every failure it can see."""
    api = NinjaAPI(
        title="Chat API",
        version="1",
        description="Conversations, messages, search, fork, summarize, export and import.",
        urls_namespace="api",
        auth=auth,
        parser=BodyParser(),
    )
    for exc_class, handler in _HANDLERS:
        api.exception_handler(exc_class)(handler)
    return api
