"""Presets in the browser: make one, start a chat from its starter prompt, see it named."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from conversations.models import Conversation
from presets.models import Preset

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_preset_made_on_its_page_starts_a_chat_from_a_starter(new_context, alice, page_errors):
    page = new_context(alice).new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto("/presets/")
    page.get_by_role("link", name="New preset").click()
    page.get_by_label("Name", exact=True).fill("Trip planner")
    page.get_by_label("Icon").fill("🧳")
    page.get_by_label("Instructions").fill("Plan trips day by day.")
    page.get_by_label("Starter prompts").fill("Plan three days in Lisbon\nWhat should I pack?")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="Trip planner")).to_be_visible()
    preset = Preset.objects.get()
    assert preset.starters == ["Plan three days in Lisbon", "What should I pack?"]

    page.goto("/")
    strip = page.get_by_role("navigation", name="Presets")
    strip.get_by_role("link", name=re.compile("Trip planner")).click()
    expect(page.locator(".landing-title")).to_contain_text("Trip planner")
    page.get_by_role("button", name="Plan three days in Lisbon").click()
    page.wait_for_url(re.compile(r"/conversations/[0-9a-f-]+/$"))
    expect(page.locator("#conv-preset")).to_contain_text("Trip planner")
    expect(page.locator(".message.user").first).to_contain_text("Plan three days in Lisbon")
    expect(page.locator(".message.assistant").first).to_be_visible(timeout=15_000)
    assert Conversation.objects.get().preset_id == preset.pk
    assert errors == []


def test_a_deleted_preset_link_says_so_on_a_new_chat(new_context, alice):
    page = new_context(alice).new_page()
    page.goto("/?preset=00000000-0000-0000-0000-000000000000")
    expect(page.get_by_role("alert")).to_contain_text("That preset is not available")
    expect(page.locator("#preset-input")).to_have_value("")
