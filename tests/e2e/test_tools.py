"""An MCP server's tool in the browser: switch it on in the composer's tools menu, ask,
see the step that names the tool and its server, and the answer built from its result."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from conversations import services
from conversations.models import Conversation
from tests.support.mcp_fixtures import http_server, refresh_now, register_http
from tests.support.openai_replies import Reply, ToolCall, default_responder, forced_tool

from .conftest import SCREENSHOTS, watch
from .test_chat import _open, _send

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def calling_lookup(body: dict) -> Reply:
    last = body["messages"][-1]
    offered = {t["function"]["name"] for t in body.get("tools") or []}
    if last["role"] == "user" and forced_tool(body) is None and "alpha__lookup" in offered:
        return Reply(tool_calls=[ToolCall("alpha__lookup", {"key": "vault"})])
    if last["role"] == "tool":
        return Reply(text=f"The vault code: {last['content']}")
    return default_responder(body)


def test_switch_on_an_mcp_tool_ask_and_see_the_step(new_context, model_server, alice, page_errors):
    url, fake = model_server
    with http_server("alpha") as (mcp_url, _proc):
        refresh_now(register_http("alpha", mcp_url))
        conversation = services.create_conversation(user=alice, title="Vault")
        page = _open(new_context, alice, conversation, base_url=url)
        watch(page, page_errors)

        page.locator("#tools-menu > summary").click()
        menu = page.locator("#tools-menu .menu-items")
        expect(menu.get_by_text("alpha", exact=True)).to_be_visible()
        with page.expect_response(lambda r: r.request.method == "PATCH"):
            menu.locator("input[value='mcp:alpha:lookup']").check()
        expect(page.locator("#tools-on-names")).to_have_text("lookup")
        assert Conversation.objects.get(pk=conversation.pk).tools == ["mcp:alpha:lookup"]
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "tools-menu-light.png"))
        page.keyboard.press("Escape")

        fake.responder = calling_lookup
        _send(page, "What is the vault code?")
        reply = page.locator("li.message.assistant[data-final='1']").last
        expect(reply.locator(".content")).to_contain_text("7-alpha", timeout=20_000)
        reply.locator("details.details > summary").click()
        expect(reply.locator(".steps")).to_contain_text("Used lookup on alpha")
        page.screenshot(path=str(SCREENSHOTS / "tools-step-light.png"))
    assert page_errors == {"errors": [], "dialogs": []}
