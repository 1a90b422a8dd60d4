"""Refuse a request whose address or query string holds what no row can (NUL).

The API and the socket check every field with pydantic (core/schemas.py); the admin's
filters and a page's query parameters go straight into querysets, where PostgreSQL refuses
a NUL in text with a DataError (a 500). One check at the door answers 400 instead.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.utils.decorators import sync_and_async_middleware

from .errors import error_response

MESSAGE = "The address must not contain NUL characters."


def refusal(request: HttpRequest) -> HttpResponse | None:
    """Return the 400 for a request whose path or query string holds a NUL, else None."""
    query = request.GET.lists()
    if "\x00" not in request.path and not any(
        "\x00" in key or any("\x00" in value for value in values) for key, values in query
    ):
        return None
    if request.path.startswith("/api/"):
        return error_response(400, "invalid", MESSAGE)
    return HttpResponseBadRequest(MESSAGE)


@sync_and_async_middleware
def StorableQueryMiddleware(get_response: Any) -> Any:
    """Answer 400 to an address with a NUL in it, before any view reads it."""
    if iscoroutinefunction(get_response):

        async def middleware(request: HttpRequest) -> Any:
            return refusal(request) or await get_response(request)

        return middleware

    def sync_middleware(request: HttpRequest) -> Any:
        return refusal(request) or get_response(request)

    return sync_middleware
