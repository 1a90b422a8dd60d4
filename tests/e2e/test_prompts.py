"""Saved prompts in the browser: "/" in the message box lists them, arrows and Enter pick
one, its {{variables}} are asked for, and the filled text is sent as the message."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from conversations.models import Message
from prompts.models import Prompt

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_slash_lists_prompts_and_a_picked_one_asks_for_its_variables(new_context, alice, bob):
    Prompt.objects.create(
        owner=alice, command="weekly", title="Weekly report", content="Write the weekly report."
    )
    Prompt.objects.create(
        owner=alice,
        command="translate",
        title="번역",
        content="Translate into {{language}}:\n\n{{text}}",
    )
    Prompt.objects.create(owner=bob, command="secret", title="Bob's own", content="not yours")
    Prompt.objects.create(
        owner=bob, command="tone", title="Shared tone", content="Be kind.", shared=True
    )
    page = new_context(alice).new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto("/")
    box = page.locator("#composer-input")
    box.press("/")
    menu = page.get_by_role("listbox", name="Saved prompts")
    expect(menu).to_be_visible()
    options = menu.get_by_role("option")
    expect(options).to_have_count(3)  # her two, the shared one; never bob's own
    expect(menu).not_to_contain_text("secret")
    expect(box).to_have_attribute("aria-expanded", "true")
    box.type("tr")  # "/tr": filtered as she types
    expect(options).to_have_count(1)
    expect(options.first).to_contain_text("/translate")
    box.press("Enter")  # picks, does not send
    dialog = page.get_by_role("dialog", name="Fill in /translate")
    expect(dialog).to_be_visible()
    # Typed as a person types: Enter goes to the next value, Shift+Enter breaks a line in
    # one, and Enter in the last inserts (it once put a line break into the value instead).
    dialog.get_by_label("language").press_sequentially("Korean")
    dialog.get_by_label("language").press("Enter")
    expect(dialog.get_by_label("text")).to_be_focused()
    dialog.get_by_label("text").press_sequentially("See you")
    dialog.get_by_label("text").press("Shift+Enter")
    dialog.get_by_label("text").press_sequentially("tomorrow")
    dialog.get_by_label("text").press("Enter")
    expect(dialog).to_be_hidden()
    expect(box).to_have_value("Translate into Korean:\n\nSee you\ntomorrow")
    expect(menu).to_be_hidden()
    assert not Message.objects.exists()  # nothing was sent while picking
    box.press("Enter")
    page.wait_for_url(re.compile(r"/conversations/[0-9a-f-]+/$"))
    expect(page.locator(".message.user").first).to_contain_text("Translate into Korean:")
    assert Message.objects.filter(role="user").get().content == (
        "Translate into Korean:\n\nSee you\ntomorrow"
    )
    # In a conversation: arrows move, Escape closes and leaves the text as typed.
    box.press("/")
    expect(options).to_have_count(3)
    box.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    box.press("Escape")
    expect(menu).to_be_hidden()
    expect(box).to_have_value("/")
    box.fill("")
    box.press("/")
    options.filter(has_text="/weekly").click()  # no variables: straight into the box
    expect(box).to_have_value("Write the weekly report.")
    assert errors == []


def test_prompts_exported_from_one_account_are_imported_into_another(new_context, alice, bob):
    Prompt.objects.create(owner=alice, command="weekly", title="주간 보고", content="Write it.")
    page = new_context(alice).new_page()
    page.goto("/prompts/")
    with page.expect_download() as download:
        page.locator("#export-prompts").click()
    exported = download.value.path().read_bytes()
    assert download.value.suggested_filename == "prompts.json"

    theirs = new_context(bob).new_page()
    errors = []
    theirs.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    theirs.goto("/prompts/")
    theirs.set_input_files(
        "#import-prompts",
        files=[{"name": "prompts.json", "mimeType": "application/json", "buffer": exported}],
    )
    expect(theirs.locator(".toast")).to_have_text("Added 1 prompt.")
    expect(theirs.locator(".preset-card h2")).to_have_text("/weekly 주간 보고")
    assert Prompt.objects.get(owner=bob).content == "Write it."
    theirs.set_input_files(
        "#import-prompts",
        files=[{"name": "notes.json", "mimeType": "application/json", "buffer": b"{not json"}],
    )
    expect(theirs.locator(".toast")).to_have_text("That file is not a prompts file.")
    assert Prompt.objects.filter(owner=bob).count() == 1
    assert errors == []
