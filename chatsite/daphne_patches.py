"""Three changes to how Daphne (and Twisted under it) handles requests and sockets.

Each is applied once, at startup (`chatsite/asgi.py`), and does nothing under another
ASGI server. Why each exists, and what it measured, is in its function's docstring.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

SERVER_CLOSE_CODES = frozenset({1001, 1011, 1012, 1013, 1014})


def apply() -> None:
    """Apply all three (idempotent)."""
    keep_request_bodies_unparsed()
    allow_server_close_codes()
    send_writes_at_once()


def _patch(module: str, owner: str, name: str, wrap: Callable[[Any], Any]) -> None:
    """Replace `module.owner.name` with `wrap(original)`, once; nothing without the module."""
    try:
        cls = getattr(importlib.import_module(module), owner)
    except ImportError:  # another ASGI server
        return
    original = getattr(cls, name)
    if getattr(original, "patched_by_chatsite", False):
        return
    replacement = wrap(original)
    replacement.patched_by_chatsite = True
    setattr(cls, name, replacement)


def keep_request_bodies_unparsed() -> None:
    """Daphne's requests skip Twisted's own parsing of POST bodies.

    Daphne's `WebRequest` is a `twisted.web.http.Request`, which by default parses every
    multipart and URL-encoded POST body into `request.args` before Daphne hands the body to
    the application — with the stdlib email parser, holding the whole body several times
    over: a 100 MB multipart upload took the process from 190 MB to 1.3 GB resident
    (bench/import_chatgpt.py), and a malformed body was answered with Twisted's bare 400
    before Django saw it. Nothing reads `args` (Daphne passes the raw body on; Django parses
    it, streaming files to disk), so Twisted's own switch for it is turned off.
    """

    def wrap(original: Any) -> Any:
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("parsePOSTFormSubmission", False)
            original(self, *args, **kwargs)

        return __init__

    _patch("daphne.http_protocol", "WebRequest", "__init__", wrap)


def allow_server_close_codes() -> None:
    """Daphne may close a websocket with the codes a server sends (1013: try again later).

    Daphne passes an application's `websocket.close` code to autobahn's `sendClose`, which
    accepts only 1000 and 3000–4999 and raises on anything else: a consumer closing with 1013
    (SPEC: PostgreSQL down → 1013) failed inside `send`, and the client saw no close at all.
    RFC 6455 reserves 1001 and 1011–1014 for servers; Daphne itself sends 1011 with
    `sendCloseFrame`, which checks nothing, and so do these.
    """

    def wrap(original: Any) -> Any:
        def serverClose(self: Any, code: int | None = None) -> None:
            if code in SERVER_CLOSE_CODES:
                self.sendCloseFrame(code=code)
            else:
                original(self, code=code)

        return serverClose

    _patch("daphne.ws_protocol", "WebSocketProtocol", "serverClose", wrap)


def send_writes_at_once() -> None:
    """Daphne's sockets send what they are given at once when nothing is waiting to be sent.

    Twisted's `FileDescriptor.write` never sends: it buffers the bytes, asks the reactor to
    watch the socket for writability, sends on the next turn of the loop and stops watching.
    Every websocket frame thus paid two changes of the loop's watch list and one more loop
    callback wrapped in Twisted's log context: about a tenth of a process streaming 200
    replies (bench/capacity.py, py-spy). asyncio's own transports try the send first and buffer
    only what the kernel did not take; this does the same for plain TCP connections. Order is
    kept: the send is tried only while nothing is buffered, and whatever was not taken (or a
    lost connection) goes through Twisted's own path. TLS connections keep Twisted's path.
    """
    try:
        import autobahn.util
    except ImportError:  # another ASGI server
        return
    # autobahn builds a debug line's arguments for every frame it sends, logged or not
    # (`sendData`), colored through click when click is installed: 4.7 us per frame here,
    # 1.6 us uncolored. Nobody reads its debug lines in color.
    autobahn.util._HAS_CLICK = False

    def wrap(buffered: Any) -> Any:
        def write(self: Any, data: bytes) -> None:
            if (
                data
                and not self.TLS
                and self.connected
                and not self.disconnecting
                and not self._writeDisconnected
                and not self._tempDataBuffer
                and self.offset == len(self.dataBuffer)
                and type(data) is bytes
            ):
                sent = self.writeSomeData(data)
                if not isinstance(sent, int):  # the connection is lost: Twisted's path says so
                    buffered(self, data)
                    return
                if sent == len(data):
                    return
                data = data[sent:]
            buffered(self, data)

        return write

    _patch("twisted.internet.tcp", "Connection", "write", wrap)
