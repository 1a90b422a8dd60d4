"""Models and instructions in the browser: pick a model, write a system prompt, send."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from accounts.preferences import get_user_settings
from conversations import services
from conversations.models import Conversation
from tests.support.openai_replies import message_texts

from .conftest import SCREENSHOTS, watch
from .test_chat import _open, _send

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_pick_a_second_model_set_a_system_prompt_and_send(
    new_context, model_server, alice, page_errors
):
    url, fake = model_server
    conversation = services.create_conversation(user=alice, title="Pirates")
    page = _open(new_context, alice, conversation, base_url=url)
    watch(page, page_errors)

    picker = page.locator("#model-select")
    expect(picker.locator("option")).to_have_count(3)  # the default, and the server's two
    picker.select_option("fake-large")
    expect(page.locator(".toast").last).to_contain_text("fake-large")

    page.locator("#conv-menu > summary").click()
    page.get_by_role("menuitem", name="Instructions…").click()
    page.fill("#system-prompt", "Answer like a pirate.")
    page.fill("#temperature", "0.4")
    page.locator("#instructions-save").click()
    expect(page.locator("#instructions-dialog")).to_be_hidden()
    expect(page.locator("#instructions-button .dot")).to_have_count(1)  # "set"
    conversation.refresh_from_db()
    assert (conversation.model, conversation.system_prompt, conversation.temperature) == (
        "fake-large",
        "Answer like a pirate.",
        0.4,
    )

    fake.clear()
    _send(page, "hello there")
    reply = page.locator("li.message.assistant[data-final='1']").last
    expect(reply.locator(".content")).to_contain_text("Echo: hello there", timeout=20_000)
    expect(reply.locator(".meta .model")).to_have_text("fake-large")
    body = fake.chat_requests()[-1]
    assert body["model"] == "fake-large" and body["temperature"] == 0.4
    assert "Answer like a pirate." in message_texts(body, "system")[0]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#conv-menu > summary").click()
    page.get_by_role("menuitem", name="Instructions…").click()
    page.screenshot(path=str(SCREENSHOTS / "models-light.png"))
    assert page_errors == {"errors": [], "dialogs": []}


def test_the_settings_page_sets_the_default_model_and_custom_instructions(
    new_context, model_server, alice, page_errors
):
    url, fake = model_server
    page = new_context(alice, base_url=url).new_page()
    watch(page, page_errors)
    page.goto("/settings/")
    page.select_option("#id_default_model", "fake-large")
    page.fill("#id_custom_instructions", "I am a night-shift nurse; keep answers short.")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash")).to_contain_text("Settings saved.")
    found = get_user_settings(user=alice)
    assert found.default_model == "fake-large"
    assert found.custom_instructions.startswith("I am a night-shift nurse")

    # A new chat, left on "default model".
    page.goto("/")
    expect(page.locator("#new-model")).to_have_value("")
    fake.clear()
    _send(page, "good morning")
    page.wait_for_url("**/conversations/*/")
    reply = page.locator("li.message.assistant[data-final='1']").last
    expect(reply.locator(".meta .model")).to_have_text("fake-large", timeout=20_000)
    body = fake.chat_requests()[-1]
    assert "night-shift nurse" in message_texts(body, "system")[0]
    assert Conversation.objects.filter(created_by=alice).latest("created_at").model == ""
    assert page_errors == {"errors": [], "dialogs": []}
