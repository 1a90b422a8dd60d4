"""The built-in web tools: `web_search` (a SearXNG server) and `read_url` (agent/net.py).

Both answer (text for the model, {"sources": [{"title", "url", "snippet"}]}), so what they
found can be cited like the user's documents; a failure a person should hear raises
`ToolFailed` with a `web.*` step.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

import httpx
import trafilatura
from langchain_core.tools import BaseTool, tool

from agent.net import (
    AllowList,
    FetchError,
    FetchLimits,
    Page,
    Resolver,
    fetch,
    read_limited,
    resolve_host,
)
from agent.steps import ToolFailed

MAX_RESULTS = 10
SNIPPET_CHARS = 400
PAGE_CHARS = 8_000
SEARCH_BYTES = 1_000_000
SEARCH_SECONDS = 10.0
HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = ("text/plain", "text/markdown")
_SPACES = re.compile(r"\s+")
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.I | re.S)

Sources = dict[str, list[dict[str, str]]]


@dataclass(frozen=True)
class Reading:
    """A page as text: its title and its readable words."""

    title: str
    text: str


def make_web_tools(
    *,
    search_url: str,
    fetch_allow: str = "",
    limits: FetchLimits = FetchLimits(),  # noqa: B008 (frozen)
    page_chars: int = PAGE_CHARS,
    search_seconds: float = SEARCH_SECONDS,
    resolver: Resolver = resolve_host,
) -> list[BaseTool]:
    """Return `web_search` (only when `search_url` is set) and `read_url`.

    `fetch_allow` is `CHAT_FETCH_ALLOW` (raises ValueError on an entry that is neither a
    host nor a network); `resolver` replaces DNS (tests).
    """
    allow = AllowList.parse(fetch_allow)

    @tool(response_format="content_and_artifact")
    async def web_search(query: str, limit: int = 5) -> tuple[str, Sources]:
        """Search the web; return the best results' titles, addresses and snippets.

        Use it for recent events or facts you are not sure of, then read_url to read a
        result in full. Cite what you use by its address.
        """
        return await search_web(
            search_url, query, max(1, min(int(limit), MAX_RESULTS)), seconds=search_seconds
        )

    @tool(response_format="content_and_artifact")
    async def read_url(url: str) -> tuple[str, Sources]:
        """Read a web page (an http or https address); return its title, address and main
        text. Use it for a link the user gave or a search result worth reading in full.
        """
        return await read_page(
            url, allow=allow, limits=limits, page_chars=page_chars, resolver=resolver
        )

    return [web_search, read_url] if search_url.strip() else [read_url]


async def search_web(
    search_url: str, query: str, limit: int, *, seconds: float = SEARCH_SECONDS
) -> tuple[str, Sources]:
    """Ask SearXNG's JSON API for `query`; return the first `limit` results."""
    query = query.strip()
    if not query:
        raise ToolFailed("tool.web_search.failed", "the search query is empty")
    payload = await _ask_searxng(search_url, query, seconds)
    results = payload.get("results") if isinstance(payload, dict) else None
    if not isinstance(results, list):
        raise _search_failed("the search service answered without a list of results")
    sources: list[dict[str, str]] = []
    for item in results:
        source = _source(item)
        if source and all(s["url"] != source["url"] for s in sources):
            sources.append(source)
        if len(sources) == limit:
            break
    if not sources:
        return f"No web results for {query!r}.", {"sources": []}
    lines = [f"Web results for {query!r}:"]
    for n, source in enumerate(sources, 1):
        lines.append(f"[{n}] {source['title']}\n{source['url']}\n{source['snippet']}")
    return "\n\n".join(lines), {"sources": sources}


async def _ask_searxng(search_url: str, query: str, seconds: float) -> Any:
    endpoint = search_url.strip().rstrip("/") + "/search"
    try:
        async with (
            asyncio.timeout(seconds),
            httpx.AsyncClient(trust_env=False, timeout=seconds) as client,
            client.stream(
                "GET",
                endpoint,
                params={"q": query, "format": "json"},
                headers={"Accept": "application/json"},
            ) as response,
        ):
            if response.status_code != 200:
                raise _search_failed(f"the search service answered HTTP {response.status_code}")
            body, truncated = await read_limited(response, SEARCH_BYTES)
    except (TimeoutError, httpx.TimeoutException) as exc:
        raise _search_failed(f"the search service did not answer within {seconds:g} s") from exc
    except (httpx.HTTPError, FetchError, OSError) as exc:
        raise _search_failed("the search service could not be reached") from exc
    if truncated:
        raise _search_failed("the search service's answer was too large")
    try:
        return json.loads(body)
    except ValueError as exc:  # not JSON (an HTML error page, JSON output turned off)
        raise _search_failed("the search service did not answer in JSON") from exc


def _search_failed(why: str) -> ToolFailed:
    return ToolFailed(
        "web.search_failed",
        f"web search is unavailable right now ({why}). Answer from what you know and say "
        "that you could not search the web.",
    )


def _source(item: Any) -> dict[str, str] | None:
    """Return one SearXNG result as a source, or None when it has no web address."""
    if not isinstance(item, dict):
        return None
    url = item.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None
    title, snippet = item.get("title"), item.get("content")
    return {
        "title": _one_line(title if isinstance(title, str) else "")[:200] or url,
        "url": url,
        "snippet": _one_line(snippet if isinstance(snippet, str) else "")[:SNIPPET_CHARS],
    }


async def read_page(
    url: str,
    *,
    allow: AllowList,
    limits: FetchLimits,
    page_chars: int = PAGE_CHARS,
    resolver: Resolver = resolve_host,
) -> tuple[str, Sources]:
    """Fetch `url` within `limits`; return its title, final address and text (capped)."""
    try:
        page = await fetch(
            url, allow=allow, limits=limits, accept=HTML_TYPES + TEXT_TYPES, resolver=resolver
        )
    except FetchError as exc:
        raise ToolFailed(f"web.{exc.problem}", str(exc), host=exc.host, **exc.params) from exc
    # Extraction is CPU work on up to max_bytes: off the event loop.
    reading = await asyncio.to_thread(page_text, page)
    if not reading.text.strip():
        host = httpx.URL(page.url).host
        raise ToolFailed("web.no_text", f"{page.url} has no readable text", host=host)
    text = reading.text
    notes = []
    if page.truncated:
        notes.append(f"only the first {limits.max_bytes:,} bytes of the page were read")
    if len(text) > page_chars:
        text = text[:page_chars]
        notes.append(f"the text is cut at {page_chars:,} characters")
    title = reading.title or page.url
    header = f"{title}\n{page.url}\n\n"
    footer = f"\n\n[{'; '.join(notes)}]" if notes else ""
    source = {"title": title, "url": page.url, "snippet": _one_line(text)[:SNIPPET_CHARS]}
    return header + text + footer, {"sources": [source]}


def page_text(page: Page) -> Reading:
    """Return a page's title and readable text: an HTML page's main content (trafilatura,
    which leaves menus and footers out), a text file as it is."""
    if page.content_type in TEXT_TYPES:
        return Reading("", _decode(page.body, page.charset))
    # Given bytes, trafilatura finds the charset in the page itself.
    html: str | bytes = _decode(page.body, page.charset) if page.charset else page.body
    document = trafilatura.bare_extraction(
        html, url=page.url, with_metadata=True, include_comments=False, include_tables=True
    )
    title = (getattr(document, "title", None) or _html_title(page.body)).strip()
    text = getattr(document, "text", None) or ""
    if not text.strip():  # too little for trafilatura to call it an article: all the words
        text = trafilatura.baseline(html)[1]
    return Reading(_one_line(title)[:300], text.strip())


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def _html_title(body: bytes) -> str:
    match = _TITLE.search(body[:200_000])
    return _decode(match.group(1), "utf-8") if match else ""


def _one_line(text: str) -> str:
    return _SPACES.sub(" ", text).strip()
