"""Refuse an admin request whose address or query string holds what no row can (NUL).

Our pages, the API and the socket check every field they read (pydantic, core/schemas.py;
the list page explains a bad filter in place). Django's admin does not: its filters and
search go straight into querysets, where PostgreSQL refuses a NUL in text with a DataError
(a 500). This is the admin's edge: one check at its door answers 400 instead.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.utils.decorators import sync_and_async_middleware

MESSAGE = "The address must not contain NUL characters."


ADMIN = "/admin/"


def refusal(request: HttpRequest) -> HttpResponse | None:
    """Return the 400 for an admin request whose path or query holds a NUL, else None."""
    if not request.path.startswith(ADMIN):
        return None
    query = request.GET.lists()
    if "\x00" not in request.path and not any(
        "\x00" in key or any("\x00" in value for value in values) for key, values in query
    ):
        return None
    return HttpResponseBadRequest(MESSAGE)


@sync_and_async_middleware
def StorableQueryMiddleware(get_response: Any) -> Any:
    """Answer 400 to an admin address with a NUL in it, before the admin reads it."""
    if iscoroutinefunction(get_response):

        async def middleware(request: HttpRequest) -> Any:
            return refusal(request) or await get_response(request)

        return middleware

    def sync_middleware(request: HttpRequest) -> Any:
        return refusal(request) or get_response(request)

    return sync_middleware
