"""Daphne's requests skip Twisted's own parsing of POST bodies.

Daphne's `WebRequest` is a `twisted.web.http.Request`, which by default parses every
multipart and URL-encoded POST body into `request.args` before Daphne hands the body to
the application — with the stdlib email parser, holding the whole body several times
over: a 100 MB multipart upload took the process from 190 MB to 1.3 GB resident
(bench/import_chatgpt.py), and a malformed body was answered with Twisted's bare 400
before Django saw it. Nothing reads `args` (Daphne passes the raw body on; Django parses
it, streaming files to disk), so Twisted's own switch for it is turned off.
"""

from __future__ import annotations

from typing import Any


def keep_request_bodies_unparsed() -> None:
    """Make Daphne's requests skip Twisted's form parsing (idempotent; no-op without Daphne)."""
    try:
        from daphne.http_protocol import WebRequest
    except ImportError:  # another ASGI server
        return
    original = WebRequest.__init__
    if getattr(original, "keeps_bodies_unparsed", False):
        return

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("parsePOSTFormSubmission", False)
        original(self, *args, **kwargs)

    __init__.keeps_bodies_unparsed = True  # type: ignore[attr-defined]
    WebRequest.__init__ = __init__  # type: ignore[method-assign]
