"""Memories in the browser: tell a fact, see it used in a new conversation, delete it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from conversations import services
from tests.support.openai_replies import Reply, ToolCall, default_responder, message_texts

from .conftest import SCREENSHOTS, watch
from .test_chat import _open, _send

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def remembering(body: dict[str, Any]) -> Reply:
    """Save "My … is …" with the remember tool, as a model told to would; else echo."""
    offered = {t["function"]["name"] for t in body.get("tools") or []}
    last = body["messages"][-1]
    text = last.get("content") if isinstance(last.get("content"), str) else ""
    if last["role"] == "user" and "remember" in offered and text.startswith("My "):
        return Reply(tool_calls=[ToolCall("remember", {"fact": text})])
    if last["role"] == "tool":
        return Reply(text="Noted.")
    return default_responder(body)


def test_a_fact_told_once_is_used_in_a_new_conversation_until_deleted(
    new_context, model_server, alice, page_errors
):
    url, fake = model_server
    fake.responder = remembering
    first = services.create_conversation(user=alice, title="Dogs")
    page = _open(new_context, alice, first, base_url=url)
    watch(page, page_errors)
    _send(page, "My dog's name is Bori.")
    reply = page.locator("li.message.assistant[data-final='1']").last
    expect(reply.locator(".content")).to_contain_text("Noted.", timeout=20_000)

    second = services.create_conversation(user=alice, title="Walks")
    page.goto(f"/conversations/{second.id}/")
    page.wait_for_function("() => window.chatSocket && window.chatSocket.isOpen")
    fake.clear()
    _send(page, "When should I walk the dog?")
    reply = page.locator("li.message.assistant[data-final='1']").last
    used = reply.locator(".memories-used")
    expect(used).to_contain_text("My dog's name is Bori.", timeout=20_000)
    assert "My dog's name is Bori." in message_texts(fake.chat_requests()[-1], "system")[0]
    expect(reply.locator("details.details > summary")).to_contain_text("1 memory")
    reply.locator("details.details > summary").click()
    expect(used).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "memories-light.png"))

    page.goto("/settings/memory/")
    item = page.locator("li.memory").filter(has_text="Bori")
    expect(item).to_have_count(1)
    # Its source: the words it was saved from (the conversation's title on hover).
    expect(item.locator("a.memory-source")).to_have_text("“My dog's name is Bori.”")
    expect(item.locator("a.memory-source")).to_have_attribute("title", "Dogs")
    item.locator("button[value='delete']").click()
    expect(page.locator("#no-memories")).to_be_visible()

    page.goto(f"/conversations/{second.id}/")
    page.wait_for_function("() => window.chatSocket && window.chatSocket.isOpen")
    fake.clear()
    _send(page, "And what about the dog's name?")
    reply = page.locator("li.message.assistant[data-final='1']").last
    expect(reply.locator(".content")).to_contain_text("Echo: And what", timeout=20_000)
    assert "Bori" not in message_texts(fake.chat_requests()[-1], "system")[0]
    expect(reply.locator(".memories-used")).to_have_count(0)
    assert page_errors == {"errors": [], "dialogs": []}
