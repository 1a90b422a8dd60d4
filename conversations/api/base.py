"""The API object: authentication (Bearer token or session + CSRF) and SPEC's error shape."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from accounts.tokens import authenticate_bearer
from conversations.errors import RateLimited, ServiceError

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


class BearerAuth(HttpBearer):
    """`Authorization: Bearer <token>` with an API token (no CSRF: no cookie involved)."""

    def authenticate(self, request: HttpRequest, token: str) -> Any | None:
        return authenticate_bearer(f"Bearer {token}")


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
            raise HttpError(403, "CSRF check failed: send the X-CSRFToken header.")
        return user


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


class BodyParser(Parser):
    """JSON bodies; an empty form body (a bare POST from a browser or curl) reads as {}."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        if request.content_type != "application/json" and not request.body.strip(b"-\r\n "):
            return {}
        if request.content_type == "multipart/form-data" and not request.POST:
            return {}
        return json.loads(request.body)


api = NinjaAPI(
    title="Chat API",
    version="1",
    description="Conversations, messages, search, fork, summarize, export and import.",
    urls_namespace="api",
    auth=[BearerAuth(), SessionAuth()],
    parser=BodyParser(),
)


@api.exception_handler(ServiceError)
def on_service_error(request: HttpRequest, exc: ServiceError) -> HttpResponse:
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else {}
    return error_response(exc.status, exc.code, exc.message, **headers)


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    problems = []
    for error in exc.errors[:5]:
        where = ".".join(str(part) for part in error.get("loc", ()) if part not in {"body"})
        problems.append(f"{where}: {error.get('msg', 'invalid')}" if where else error["msg"])
    return error_response(422, "invalid", "; ".join(problems) or "Invalid input.")


@api.exception_handler(AuthenticationError)
def on_authentication_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return error_response(401, "unauthorized", "Log in or send a valid Bearer token.")


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return error_response(exc.status_code, HTTP_CODES.get(exc.status_code, "error"), str(exc))


@api.exception_handler(RequestDataTooBig)
def on_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return error_response(413, "too_long", "The request body is too large.")


@api.exception_handler(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return error_response(404, "not_found", "Not found.")
