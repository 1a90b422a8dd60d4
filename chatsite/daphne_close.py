"""Daphne may close a websocket with the codes a server sends (1013: try again later).

Daphne passes an application's `websocket.close` code to autobahn's `sendClose`, which
accepts only 1000 and 3000–4999 and raises on anything else: a consumer closing with 1013
(SPEC: PostgreSQL down → 1013) failed inside `send`, and the client saw no close at all.
RFC 6455 reserves 1001 and 1011–1014 for servers; Daphne itself sends 1011 with
`sendCloseFrame`, which checks nothing, and so do these.
"""

from __future__ import annotations

from typing import Any

SERVER_CLOSE_CODES = frozenset({1001, 1011, 1012, 1013, 1014})


def allow_server_close_codes() -> None:
    """Let Daphne send SERVER_CLOSE_CODES (idempotent; no-op without Daphne)."""
    try:
        from daphne.ws_protocol import WebSocketProtocol
    except ImportError:  # another ASGI server
        return
    original = WebSocketProtocol.serverClose
    if getattr(original, "allows_server_codes", False):
        return

    def serverClose(self: Any, code: int | None = None) -> None:
        if code in SERVER_CLOSE_CODES:
            self.sendCloseFrame(code=code)
        else:
            original(self, code=code)

    serverClose.allows_server_codes = True  # type: ignore[attr-defined]
    WebSocketProtocol.serverClose = serverClose  # type: ignore[method-assign]
