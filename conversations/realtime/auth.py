"""Websocket authentication: a session cookie behind the origin check, or a Bearer token.

`AllowedHostsOriginValidator` answers 403 to every client without `Origin`, which is
every non-browser client. A token is not ambient authority (a page cannot make the
browser send it), so sockets that carry `Authorization` or no `Origin` skip the origin
check and never read cookies; every other socket keeps it (cross-site hijacking).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from channels.security.websocket import AllowedHostsOriginValidator
from django.contrib.auth.models import AnonymousUser
from django.http.cookie import parse_cookie
from django.utils import translation

from accounts.tokens import authenticate_token


def header(scope: dict[str, Any], name: bytes) -> bytes | None:
    """Return one request header of an ASGI scope, or None."""
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value
    return None


def scope_language(scope: dict[str, Any]) -> str:
    """Return the language a socket's person reads, as LocaleMiddleware decides it for a
    page: the language cookie (a browser's), else Accept-Language, else LANGUAGE_CODE."""
    cookie = header(scope, b"cookie") or b""
    request = SimpleNamespace(
        COOKIES=parse_cookie(cookie.decode("latin-1")),
        META={"HTTP_ACCEPT_LANGUAGE": (header(scope, b"accept-language") or b"").decode("latin-1")},
    )
    return translation.get_language_from_request(request)  # type: ignore[arg-type]


class BearerAuthMiddleware(BaseMiddleware):
    """Put the user an `Authorization: Bearer` header names (else anonymous) in the scope."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        value = header(scope, b"authorization")
        token = await database_sync_to_async(authenticate_token)(value) if value else None
        user = token.owner if token is not None else AnonymousUser()
        scope = {**scope, "user": user, "token_id": token.pk if token is not None else None}
        return await super().__call__(scope, receive, send)


class SocketAuthRouter:
    """Send token clients through Bearer auth and browsers through origin check + session."""

    def __init__(self, inner: Any) -> None:
        self.token_app = BearerAuthMiddleware(inner)
        self.cookie_app = AllowedHostsOriginValidator(AuthMiddlewareStack(inner))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if header(scope, b"authorization") is not None or header(scope, b"origin") is None:
            return await self.token_app(scope, receive, send)
        return await self.cookie_app(scope, receive, send)
