"""The web tools in a real turn: with a search provider configured they are on by default;
what they read is cited like documents, and a private address is refused with a step."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from conversations import services
from tests.support.turns import ask, calling, told
from tests.support.web_sites import SearXNG, Server, site_routes, url_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
async def web(settings):
    """A fake SearXNG and a small site, both on 127.0.0.1; the site is not allowed yet."""
    searx, site = await SearXNG().start(), await Server(site_routes({})).start()
    settings.WEB_SEARCH_URL = url_of(searx, "")
    settings.CHAT_FETCH_ALLOW = ""
    yield searx, site
    await searx.stop()
    await site.stop()


async def new_conversation(alice):
    return await sync_to_async(services.create_conversation)(user=alice, title="Web")


async def test_a_web_search_is_on_by_default_and_its_pages_are_cited(model, alice, web):
    searx, _site = web
    model.responder = calling("web_search", {"query": "sea otters"})
    reply, frames = await ask(alice, await new_conversation(alice), content="Why do otters?")
    assert searx.queries and searx.queries[0]["q"] == "sea otters"
    assert "Sea otter - Wikipedia" in told(model)
    [references] = [p for p in reply.parts if p["type"] == "references"]
    assert references["items"][0]["url"] == "https://en.wikipedia.org/wiki/Sea_otter"
    assert any(f["type"] == "sources" for f in frames)
    steps = [f["content"] for f in frames if f["type"] == "thinking"]
    assert "Searching the web" in steps and "Searched the web" in steps


async def test_reading_a_private_address_is_refused_and_the_reply_goes_on(model, alice, web):
    _searx, site = web
    model.responder = calling("read_url", {"url": url_of(site, "/article")})
    reply, frames = await ask(alice, await new_conversation(alice), content="Read my router.")
    assert reply.finish_reason == "end_turn"
    assert site.hits == []  # nothing reached it
    [refusal] = [f for f in frames if f["type"] == "thinking" and f["step"] == "tool_result"]
    assert refusal["code"] == "web.blocked"
    assert told(model).startswith("Error: ")


async def test_an_allowed_page_is_read_as_its_article(model, alice, web, settings):
    _searx, site = web
    settings.CHAT_FETCH_ALLOW = "127.0.0.1"
    model.responder = calling("read_url", {"url": url_of(site, "/article")})
    reply, _frames = await ask(alice, await new_conversation(alice), content="Read this page.")
    assert "Sea otters hold hands while they sleep" in told(model)
    assert "Gift shop" not in told(model)
    [references] = [p for p in reply.parts if p["type"] == "references"]
    assert references["items"][0]["title"].startswith("Why sea otters hold hands")
