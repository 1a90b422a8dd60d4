"""Each request runs in the RLS scope of whoever makes it (core/rls.py): identity is
this app's business (sessions, API tokens), so the middleware lives here."""

from __future__ import annotations

from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponseBase
from django.utils.decorators import sync_and_async_middleware

from core import rls

from .tokens import authenticate_token

STAFF_AREA = "/admin/"


def scope_for_request(request: HttpRequest) -> rls.Scope:
    """The scope of a request: an API token's owner (the API tries the token first), else
    the session's user; staff see every row in the admin only; anonymous see none."""
    if request.headers.get("Authorization"):
        token = authenticate_token(request.headers["Authorization"])
        request.api_token = token  # BearerAuth takes it from here: one lookup per request
        if token is not None:
            return rls.user_scope(token.owner_id)
    return rls.scope_for_user(request.user, staff_area=request.path.startswith(STAFF_AREA))


def _bind_body(response: HttpResponseBase) -> HttpResponseBase:
    if response.streaming:  # its body is read after this middleware returns
        response.streaming_content = rls.bind_iterator(response.streaming_content)
    return response


@sync_and_async_middleware
def RowLevelSecurityMiddleware(get_response: Any) -> Any:
    if iscoroutinefunction(get_response):

        async def middleware(request: HttpRequest) -> HttpResponseBase:
            scope = await sync_to_async(scope_for_request)(request)
            with rls.using(scope):
                return _bind_body(await get_response(request))

        return middleware

    def sync_middleware(request: HttpRequest) -> HttpResponseBase:
        with rls.using(scope_for_request(request)):
            return _bind_body(get_response(request))

    return sync_middleware
