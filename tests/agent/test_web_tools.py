"""The web tools against real servers the tests start: a fake SearXNG and a small site:
searching, and reading a page (the attacks on read_url: test_read_url_attacks.py)."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest

from agent.net import Page
from agent.tools.web import make_web_tools, page_text
from tests.support.web_sites import (
    ARTICLE,
    call,
    read_url,
    refusal,
    url_of,
    web_search,
)

# web_search


async def test_search_results_come_with_their_sources(searx):
    text, artifact = await call(web_search(searx), query="sea otters", limit=2)
    assert searx.queries == [{"q": "sea otters", "format": "json"}]
    assert artifact == {
        "sources": [
            {
                "title": "Sea otter - Wikipedia",
                "url": "https://en.wikipedia.org/wiki/Sea_otter",
                "snippet": "The sea otter is a marine mammal native to the coasts of the"
                " northern Pacific.",
            },
            {
                "title": "Otters hold hands",
                "url": "https://example.org/otters",
                "snippet": "Rafting.",
            },
        ]
    }
    assert "[1] Sea otter - Wikipedia\nhttps://en.wikipedia.org/wiki/Sea_otter" in text
    assert "[2] Otters hold hands" in text and "A third" not in text


async def test_search_is_offered_only_with_a_search_server():
    assert [t.name for t in make_web_tools(search_url="")] == ["read_url"]
    tools = make_web_tools(search_url="http://searx.internal:8080")
    assert [t.name for t in tools] == ["web_search", "read_url"]
    assert all(t.description for t in tools)


async def test_a_search_with_no_results_says_so(searx):
    searx.answer = {"query": "zzz", "results": []}
    text, artifact = await call(web_search(searx), query="zzz")
    assert text == "No web results for 'zzz'." and artifact == {"sources": []}


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("<html>Too many requests</html>", "did not answer in JSON"),
        ('{"results": [', "did not answer in JSON"),
        ({"error": "format json is not allowed"}, "without a list of results"),
        ({"results": "none"}, "without a list of results"),
        (["a", "list"], "without a list of results"),
    ],
)
async def test_garbage_from_the_search_server_is_a_clear_failure(searx, answer, why):
    searx.answer = answer
    failure = await refusal(web_search(searx), query="otters")
    assert failure.code == "web.search_failed" and why in str(failure)


async def test_a_search_server_error_is_a_clear_failure(searx):
    searx.status = 500
    failure = await refusal(web_search(searx), query="otters")
    assert failure.code == "web.search_failed" and "HTTP 500" in str(failure)


async def test_a_silent_search_server_is_given_up_on(searx):
    searx.delay = 30
    started = time.monotonic()
    failure = await refusal(web_search(searx, search_seconds=0.5), query="otters")
    assert failure.code == "web.search_failed" and "within 0.5 s" in str(failure)
    assert time.monotonic() - started < 3


async def test_a_search_server_that_is_down_is_a_clear_failure(searx):
    await searx.stop()
    failure = await refusal(web_search(searx), query="otters")
    assert failure.code == "web.search_failed" and "could not be reached" in str(failure)


# read_url: reading


async def test_an_article_reads_as_its_article_not_its_menu(site):
    url = url_of(site, "/article")
    text, artifact = await call(read_url(allow="127.0.0.1"), url=url)
    title, address, _, *body = text.split("\n")
    assert (title, address) == ("Why sea otters hold hands", url)
    body_text = "\n".join(body)
    assert "do not drift apart" in body_text and "crack open shells" in body_text
    for boilerplate in ("Gift shop", "Donate today", "About us", "Cookie settings", "beavers"):
        assert boilerplate not in text
    [source] = artifact["sources"]
    assert source["title"] == "Why sea otters hold hands" and source["url"] == url
    assert "drift apart" in source["snippet"]


async def test_a_compressed_page_reads_the_same(site):
    text, _ = await call(read_url(allow="127.0.0.1"), url=url_of(site, "/article-gzip"))
    assert "do not drift apart" in text and "Gift shop" not in text


async def test_a_text_file_reads_as_it_is(site):
    text, artifact = await call(read_url(allow="127.0.0.1"), url=url_of(site, "/plain"))
    assert text.endswith("Tide tables for Monterey Bay.\nHigh tide 06:12.")
    assert artifact["sources"][0]["url"] == url_of(site, "/plain")


async def test_other_kinds_of_file_are_refused(site):
    failure = await refusal(read_url(allow="127.0.0.1"), url=url_of(site, "/file.pdf"))
    assert failure.code == "web.unsupported" and failure.params["kind"] == "application/pdf"


async def test_a_page_without_words_is_a_clear_failure(site):
    failure = await refusal(read_url(allow="127.0.0.1"), url=url_of(site, "/blank"))
    assert failure.code == "web.no_text" and failure.params["host"] == "127.0.0.1"


async def test_an_error_page_is_a_clear_failure(site):
    failure = await refusal(read_url(allow="127.0.0.1"), url=url_of(site, "/missing"))
    assert failure.code == "web.page_error" and failure.params["status"] == 404


async def test_a_long_page_is_cut_for_the_model(site):
    text, _ = await call(read_url(allow="127.0.0.1", page_chars=200), url=url_of(site, "/article"))
    assert text.endswith("[the text is cut at 200 characters]")
    assert len(text) < 200 + 200


def test_reading_a_page_downloads_nothing(monkeypatch):
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the extractor reached for the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    page = Page("https://example.org/otters", 200, "text/html", None, ARTICLE.encode(), False)
    reading = page_text(page)
    assert reading.title == "Why sea otters hold hands" and "kelp" in reading.text
