"""How much a socket's client has left unread, so one that never reads cannot grow the process.

Daphne writes each frame into the socket's Twisted transport at once; what the client
does not read waits there, in this process's memory, without limit. Channels shows none
of it, so this looks through the ASGI `send` Daphne gave the consumer (a partial of its
server's `handle_reply` with the socket's protocol) to the transport's buffer. Under
another server (the test communicator, uvicorn) it answers None and nothing is bounded
here.
"""

from __future__ import annotations

from typing import Any


def unread_bytes(send: Any) -> int | None:
    """Return the bytes waiting to reach the socket's client, or None if unknown.

    Middleware that wraps `send` names the function it wraps in `__wrapped__`.
    """
    while hasattr(send, "__wrapped__") and not hasattr(send, "args"):
        send = send.__wrapped__
    for arg in getattr(send, "args", ()):
        transport = getattr(arg, "transport", None)
        if transport is None:
            continue
        buffered = getattr(transport, "dataBuffer", None)
        waiting = getattr(transport, "_tempDataLen", None)
        if buffered is None or waiting is None:
            return None
        return len(buffered) - getattr(transport, "offset", 0) + waiting
    return None
