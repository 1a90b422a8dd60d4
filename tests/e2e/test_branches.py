"""Branches in the browser: regenerate, flip versions, edit a message, continue a reply."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from conversations import services
from conversations.models import Conversation, Message

from .conftest import SCREENSHOTS, watch
from .test_chat import LONG_PROMPT, _open, _send

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _last_reply(page):
    return page.locator("li.message.assistant[data-final='1']").last


def _wait_idle(page) -> None:
    expect(page.locator("li.message.streaming")).to_have_count(0, timeout=20_000)
    expect(page.locator("#send-button")).to_be_enabled(timeout=20_000)


def _click(item, action: str) -> None:
    item.hover()
    item.locator(f"button[data-action='{action}']").first.click()


def test_regenerate_flip_versions_edit_and_continue(new_context, alice, page_errors):
    conversation = services.create_conversation(user=alice, title="Branches")
    page = _open(new_context, alice, conversation)
    watch(page, page_errors)
    _send(page, "Hello branches")
    _wait_idle(page)
    first_reply = _last_reply(page).get_attribute("data-id")

    # Regenerate twice: ‹ 3/3 ›, each version a stored sibling.
    for n in (2, 3):
        _click(_last_reply(page), "regenerate")
        expect(_last_reply(page).locator(".version-count")).to_have_text(f"{n}/{n}", timeout=20_000)
        _wait_idle(page)
    assert Message.objects.filter(conversation=conversation, role="assistant").count() == 3
    expect(page.locator("li.message.assistant")).to_have_count(1)  # one branch shown

    # Flip back through the versions, and forward again.
    for shown in ("2/3", "1/3"):
        _last_reply(page).locator("button[aria-label='Previous version']").click()
        expect(_last_reply(page).locator(".version-count")).to_have_text(shown)
    assert _last_reply(page).get_attribute("data-id") == first_reply
    conversation.refresh_from_db()
    assert str(conversation.current_message_id) == first_reply
    _last_reply(page).locator("button[aria-label='Next version']").click()
    expect(_last_reply(page).locator(".version-count")).to_have_text("2/3")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "branches-light.png"))

    # Edit the first message: a second version of it, answered.
    question = page.locator("li.message.user").first
    _click(question, "edit")
    editor = page.locator(".editor-input")
    editor.fill("Hello, edited branches")
    editor.press("Enter")
    expect(page.locator("li.message.user .content")).to_have_text("Hello, edited branches")
    expect(page.locator("li.message.user .version-count")).to_have_text("2/2", timeout=20_000)
    _wait_idle(page)
    expect(page.locator("li.message.assistant")).to_have_count(1)

    # Up in the empty box edits the last message of yours; Esc puts it back.
    page.locator("#composer-input").focus()
    page.keyboard.press("ArrowUp")
    expect(page.locator(".editor-input")).to_have_value("Hello, edited branches")
    page.locator(".editor-input").press("Escape")
    expect(page.locator(".editor-input")).to_have_count(0)

    # Continue a reply stopped with Esc: the new version holds the whole text.
    _send(page, LONG_PROMPT)
    expect(page.locator("li.message.streaming .stream-text")).not_to_be_empty()
    page.keyboard.press("Escape")
    _wait_idle(page)
    stopped = Message.objects.filter(conversation=conversation, role="assistant").latest(
        "sequence_number"
    )
    assert stopped.finish_reason == "stopped" and stopped.content
    _click(_last_reply(page), "continue")
    expect(_last_reply(page).locator(".version-count")).to_have_text("2/2", timeout=20_000)
    _wait_idle(page)
    whole = Message.objects.filter(conversation=conversation, role="assistant").latest(
        "sequence_number"
    )
    assert whole.content.startswith(stopped.content) and len(whole.content) > len(stopped.content)
    assert whole.parent_id == stopped.parent_id
    assert Conversation.objects.get(pk=conversation.pk).current_message_id == whole.pk
    assert page_errors["errors"] == []
