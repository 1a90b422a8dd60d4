"""Real HTTP servers for the web tools' tests: a small site (an article, other kinds of
file, redirects, hostile bodies) and a fake SearXNG, each recording what reached it; and
the web tools built and called as the agent does (`read_url`, `web_search`, `call`)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import ssl
from collections.abc import Sequence
from typing import Any

import pytest
from aiohttp import web

from agent.net import FetchLimits
from agent.steps import ToolFailed
from agent.tools.web import make_web_tools

ARTICLE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Why sea otters hold hands | Nature Notes</title></head>
<body>
<header><nav><ul>
  <li><a href="/">Home</a></li><li><a href="/about">About us</a></li>
  <li><a href="/shop">Gift shop</a></li><li><a href="/donate">Donate today</a></li>
</ul></nav></header>
<main><article>
<h1>Why sea otters hold hands</h1>
<p>Sea otters hold hands while they sleep so that they do not drift apart on the current.
Biologists call a floating group of otters a raft, and a raft can hold more than a hundred
animals resting together in the kelp.</p>
<p>Mothers wrap their pups in strands of kelp to keep them anchored while they dive for sea
urchins, crabs and clams. A pup cannot dive for its first weeks, so the kelp keeps it safe.</p>
<p>Otters also keep a favourite stone in a pouch of loose skin under the forearm, and use it
to crack open shells on their chests while floating on their backs.</p>
</article></main>
<aside><a href="/beavers">Related: ten facts about beavers</a></aside>
<footer><p>Copyright 2026 Nature Notes. Privacy policy. Cookie settings.
Subscribe to our newsletter.</p></footer>
</body></html>
"""
CHUNK = ("<p>" + "lorem ipsum dolor sit amet " * 2400 + "</p>\n").encode()  # ~64 KB
TEN_GB = 10 * 1024**3
SEARX_RESULTS = [
    {"title": "Sea otter - Wikipedia", "url": "https://en.wikipedia.org/wiki/Sea_otter",
     "content": "The sea otter is a marine mammal native to the coasts of the\n northern Pacific."},
    {"title": "No address"},
    {"title": "Sea otter - Wikipedia", "url": "https://en.wikipedia.org/wiki/Sea_otter",
     "content": "the same page again"},
    {"title": "Otters hold hands", "url": "https://example.org/otters", "content": "Rafting."},
    {"title": "A third", "url": "https://example.net/3", "content": "Third."},
    "not even an object",
]  # fmt: skip


class Server:
    """A real HTTP server on one address: records each request's path and Host header."""

    def __init__(self, routes: dict[str, Any]) -> None:
        self.routes = routes
        self.hits: list[str] = []
        self.hosts: list[str] = []
        self.sent = 0  # body bytes written by the endless routes
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def start(self, address: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> Server:
        app = web.Application(middlewares=[self._record])
        for path, handler in self.routes.items():
            app.router.add_get(path, handler)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5)
        await self._runner.setup()
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.bind((address, 0))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock, ssl_context=tls).start()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.hits.append(request.path)
        self.hosts.append(request.headers.get("Host", ""))
        return await handler(request)


def site_routes(server_of: dict[str, Server]) -> dict[str, Any]:
    """The small site: an article, other kinds of file, redirects and hostile bodies."""

    async def article(request: web.Request) -> web.Response:
        return web.Response(text=ARTICLE, content_type="text/html")

    async def article_gzip(request: web.Request) -> web.Response:
        body = gzip.compress(ARTICLE.encode())
        return web.Response(
            body=body, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}
        )

    async def plain(request: web.Request) -> web.Response:
        return web.Response(text="Tide tables for Monterey Bay.\nHigh tide 06:12.")

    async def blank(request: web.Request) -> web.Response:
        return web.Response(
            text="<html><body> <div></div> </body></html>", content_type="text/html"
        )

    async def pdf(request: web.Request) -> web.Response:
        return web.Response(body=b"%PDF-1.7 ...", content_type="application/pdf")

    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404, text="no such page")

    async def secret(request: web.Request) -> web.Response:
        return web.Response(text="the admin password is hunter2")

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPFound(request.query["to"])

    async def loop(request: web.Request) -> web.Response:
        raise web.HTTPFound("/loop")

    async def endless(request: web.Request) -> web.StreamResponse:
        """Ten gigabytes promised, sent as fast as the client reads, until it hangs up."""
        response = web.StreamResponse(
            headers={"Content-Type": "text/html", "Content-Length": str(TEN_GB)}
        )
        await response.prepare(request)
        server = server_of["site"]
        with contextlib.suppress(ConnectionError):  # the client hung up
            await response.write(b"<html><head><title>Lorem</title></head><body>")
            while server.sent < TEN_GB:
                await response.write(CHUNK)
                server.sent += len(CHUNK)
        return response

    async def bomb(request: web.Request) -> web.Response:
        """100 MB of HTML in a 100 KB gzip body."""
        inflated = b"<html><body><p>" + b"lorem ipsum " * 8_500_000
        return web.Response(
            body=gzip.compress(inflated, compresslevel=9),
            headers={"Content-Type": "text/html", "Content-Encoding": "gzip"},
        )

    async def slow(request: web.Request) -> web.StreamResponse:
        """Headers at once, then one byte a second, for ever (a slow-loris body)."""
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        with contextlib.suppress(ConnectionError):  # the client hung up
            for _ in range(3600):
                await response.write(b"a")
                await asyncio.sleep(1)
        return response

    async def silent(request: web.Request) -> web.Response:
        await asyncio.sleep(3600)
        return web.Response(text="too late")

    return {
        "/article": article,
        "/article-gzip": article_gzip,
        "/plain": plain,
        "/blank": blank,
        "/file.pdf": pdf,
        "/missing": missing,
        "/secret": secret,
        "/redirect": redirect,
        "/loop": loop,
        "/endless": endless,
        "/bomb": bomb,
        "/slow": slow,
        "/silent": silent,
    }


class SearXNG(Server):
    """A fake SearXNG answering `/search?q=...&format=json` the way `answer` says."""

    def __init__(self) -> None:
        self.answer: Any = {"query": "", "results": SEARX_RESULTS}
        self.status = 200
        self.delay = 0.0
        self.queries: list[dict[str, str]] = []
        super().__init__({"/search": self._search})

    async def _search(self, request: web.Request) -> web.Response:
        self.queries.append(dict(request.query))
        await asyncio.sleep(self.delay)
        if isinstance(self.answer, str):
            return web.Response(status=self.status, text=self.answer, content_type="text/html")
        return web.json_response(self.answer, status=self.status)


def url_of(server: Server, path: str, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{server.port}{path}"


# --- calling the web tools as the agent does -----------------------------------------


def fake_dns(mapping: dict[str, Sequence[str]], calls: list[str] | None = None):
    """Return a resolver that knows only `mapping` (a name with a list: one answer per call)."""

    async def resolve(host: str) -> Sequence[str]:
        if calls is not None:
            calls.append(host)
        if host not in mapping:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        answer = mapping[host]
        return answer.pop(0) if answer and isinstance(answer[0], list) else answer

    return resolve


def read_url(allow: str = "", resolver: Any = None, page_chars: int = 8_000, **limits: Any):
    extra = {"resolver": resolver} if resolver else {}
    [tool] = make_web_tools(
        search_url="",
        fetch_allow=allow,
        limits=FetchLimits(**limits),
        page_chars=page_chars,
        **extra,
    )
    assert tool.name == "read_url"
    return tool


def web_search(searx: Server, **options: Any):
    tools = make_web_tools(search_url=f"http://127.0.0.1:{searx.port}/", **options)
    return {t.name: t for t in tools}["web_search"]


async def call(tool: Any, **args: Any) -> tuple[str, dict[str, Any]]:
    """Call a tool the way the agent does (a tool call), returning (content, artifact)."""
    message = await tool.ainvoke(
        {"type": "tool_call", "id": "call-1", "name": tool.name, "args": args}
    )
    return message.content, message.artifact


async def refusal(tool: Any, **args: Any) -> ToolFailed:
    with pytest.raises(ToolFailed) as caught:
        await call(tool, **args)
    return caught.value
