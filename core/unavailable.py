"""Answer "try again later" when PostgreSQL or Redis is out of reach (SPEC: Operations).

HTTP: 503 with SPEC's error shape `{"error": {"code": "unavailable", ...}}` (a small page for
browsers), never a 500. Django turns a failure anywhere in the middleware chain or a view
into a 500 response on the spot; `note_outage` (on `got_request_exception`) marks the
request when the failure was an outage, and `UnavailableMiddleware`, outermost, answers 503
instead. The API's own exception handler (core/api.py) asks `unavailable_response` directly.

Websockets: close 1013 (try again later), never a dropped handshake or 1011:
`close_sockets_when_unavailable` wraps the websocket application (authentication reads the
database before any consumer runs); a consumer closes its own socket with
`close_socket_on_outage`, so that it still leaves cleanly (conversations/consumers.py).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from asgiref.sync import iscoroutinefunction
from channels.exceptions import StopConsumer
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.loader import render_to_string
from django.utils.decorators import sync_and_async_middleware
from django.utils.translation import gettext as _

from .errors import error_response
from .outages import Outage, outage_of, statement_timed_out

logger = logging.getLogger(__name__)

CLOSE_TRY_AGAIN_LATER = 1013
RETRY_AFTER_SECONDS = 5


def wants_json(request: HttpRequest) -> bool:
    """Say whether a request is an API client's (JSON) rather than a browser page's."""
    if request.path.startswith("/api/"):
        return True
    return not request.accepts("text/html")


def unavailable_response(request: HttpRequest, outage: Outage) -> HttpResponse:
    """Answer 503: JSON in SPEC's error shape for API clients, a plain page for browsers."""
    message = _("%(service)s cannot be reached right now; try again in a few seconds.") % {
        "service": outage.name
    }
    retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    if wants_json(request):
        return error_response(503, "unavailable", message, **retry)
    # No request context: the shell's context (the user, the sidebar) needs the database.
    page = render_to_string("503.html", {"message": message})
    return HttpResponse(page, status=503, headers=retry)


def busy_response(request: HttpRequest) -> HttpResponse:
    """Answer 503 for a statement PostgreSQL ended at its timeout: the database answers, but
    not in time for this request (a lock held long, a server overloaded)."""
    message = _("The database is too busy to answer right now; try again in a few seconds.")
    retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    if wants_json(request):
        return error_response(503, "unavailable", message, **retry)
    return HttpResponse(
        render_to_string("503.html", {"message": message}), status=503, headers=retry
    )


def unavailable_for(request: HttpRequest, error: BaseException) -> HttpResponse | None:
    """Return the 503 a failure calls for, or None (then it is a 500): PostgreSQL or Redis out
    of reach (the outage noted, logged once), or a statement that ran out of time."""
    outage = outage_of(error)
    if outage is not None:
        outage.failed(error)
        return unavailable_response(request, outage)
    if statement_timed_out(error):
        logger.warning(
            "%s %s: a statement ran out of time (DB_STATEMENT_TIMEOUT): %s",
            request.method,
            request.path,
            " ".join(str(error).split()),
        )
        return busy_response(request)
    return None


def note_outage(sender: Any = None, request: HttpRequest | None = None, **kwargs: Any) -> None:
    """On `got_request_exception`: keep the failure on the request for the middleware."""
    if request is not None:
        request.failure = sys.exc_info()[1]  # type: ignore[attr-defined]


def _translated(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    failure = getattr(request, "failure", None)
    if failure is None or response.status_code != 500:
        return response
    return unavailable_for(request, failure) or response


@sync_and_async_middleware
def UnavailableMiddleware(get_response: Any) -> Any:
    """Answer 503 instead of the 500 that an outage caused (first in MIDDLEWARE)."""
    if iscoroutinefunction(get_response):

        async def middleware(request: HttpRequest) -> HttpResponseBase:
            return _translated(request, await get_response(request))

        return middleware

    def sync_middleware(request: HttpRequest) -> HttpResponseBase:
        return _translated(request, get_response(request))

    return sync_middleware


async def close_socket_on_outage(consumer: Any, error: Exception, message: dict[str, Any]) -> bool:
    """Close a consumer's socket 1013 if `error` is an outage; say whether it was handled.

    For the disconnect event the socket is already closed: the consumer stops (StopConsumer).
    A statement that ran out of time (the database answers, slowly) keeps the socket open:
    the ask gets an `error` frame `unavailable`, to try again.
    """
    outage = outage_of(error)
    if outage is None:
        send_error = getattr(consumer, "send_error", None)
        if not statement_timed_out(error) or send_error is None:
            return False
        if message.get("type") == "websocket.disconnect":
            raise StopConsumer from None
        logger.warning("a socket's ask: a statement ran out of time (DB_STATEMENT_TIMEOUT)")
        await send_error(
            "unavailable",
            _("The database is too busy to answer right now; try again in a few seconds."),
        )
        return True
    outage.failed(error)
    if message.get("type") == "websocket.disconnect":
        raise StopConsumer from None
    consumer.is_closed = True
    await consumer.close(code=CLOSE_TRY_AGAIN_LATER)
    return True


def close_sockets_when_unavailable(app: Any) -> Any:
    """Wrap a websocket ASGI app: an outage that escapes it closes the socket 1013."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> Any:
        sent: set[str] = set()

        async def tracked_send(message: dict[str, Any]) -> None:
            await send(message)
            sent.add(message["type"])

        tracked_send.__wrapped__ = send  # type: ignore[attr-defined]  # realtime/backlog.py

        try:
            return await app(scope, receive, tracked_send)
        except Exception as exc:
            outage = outage_of(exc)
            if outage is None:
                raise
            outage.failed(exc)
            if "websocket.close" not in sent:
                if "websocket.accept" not in sent:  # a close before accept reads as a bare 403
                    await send({"type": "websocket.accept"})
                await send({"type": "websocket.close", "code": CLOSE_TRY_AGAIN_LATER})
            return None

    return wrapped
