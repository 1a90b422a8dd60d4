"""The face, round 2 (issue 56): what a ChatGPT user still trips on in the first hour."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from conversations import services
from conversations.models import Message
from tests.support import seed
from usage.models import Budget
from usage.services import record_usage

from .conftest import watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}


def _open(page, conversation) -> None:
    page.goto(f"/conversations/{conversation.id}/")
    expect(page.locator("#composer-input")).to_be_enabled()
    page.wait_for_function("() => window.chatSocket && window.chatSocket.isOpen")


def test_return_on_a_phone_is_a_new_line_and_the_button_sends(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Phone keys")
    page = new_context(alice, **PHONE).new_page()
    _open(page, conversation)
    box = page.locator("#composer-input")
    box.click()
    page.keyboard.type("first half")
    page.keyboard.press("Enter")
    page.keyboard.type("second half")
    assert box.input_value() == "first half\nsecond half"
    assert box.get_attribute("enterkeyhint") == "enter"
    page.wait_for_timeout(300)
    assert Message.objects.filter(conversation=conversation).count() == 0  # nothing went out
    page.locator("#send-button").tap()
    expect(page.locator("li.message.user")).to_have_count(1)
    assert Message.objects.filter(conversation=conversation, role="user").get().content == (
        "first half\nsecond half"
    )


def test_enter_still_sends_with_a_keyboard_and_mouse(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Desktop keys")
    page = new_context(alice).new_page()
    _open(page, conversation)
    assert page.locator("#composer-input").get_attribute("enterkeyhint") == "send"
    page.fill("#composer-input", "one line")
    page.press("#composer-input", "Enter")
    expect(page.locator("li.message.user")).to_have_count(1)


WATCH_SEND = """() => {
  const t = (window.__t = {});
  const sent = (e) => { if (e.key === "Enter") t.sent = performance.now(); };
  document.addEventListener("keydown", sent, true);
  new MutationObserver(() => {
    const live = document.querySelector("li.message.streaming");
    if (live && t.shown === undefined) {
      t.shown = performance.now();
      t.dots = getComputedStyle(live.querySelector(".cursor"), "::after").content;
      t.label = getComputedStyle(live.querySelector(".live-steps"), "::before").content;
      t.stop = !document.getElementById("stop-button").hidden;
    }
    const text = live?.querySelector(".stream-text")?.textContent;
    if (text && t.text === undefined) t.text = performance.now();
  }).observe(document.getElementById("conversation"),
    { subtree: true, childList: true, characterData: true });
}"""


def test_the_reply_shows_it_is_coming_at_once_after_send(new_context, alice, slow_first_token):
    conversation = services.create_conversation(user=alice, title="Waiting")
    page = new_context(alice, base_url=slow_first_token).new_page()
    _open(page, conversation)
    page.evaluate(WATCH_SEND)
    page.fill("#composer-input", "What is the answer?")
    page.press("#composer-input", "Enter")
    expect(page.locator("li.message.assistant[data-final='1']")).to_have_count(1, timeout=20_000)
    t = page.evaluate("() => window.__t")
    assert t["text"] - t["sent"] > 1000  # the gap was there: the first token came late
    assert t["shown"] - t["sent"] < 100  # and the reply's bubble came at once
    assert t["dots"] == '"●●●"' and t["label"] == '"Working…"' and t["stop"]
    expect(page.locator("#stop-button")).to_be_hidden()


def test_a_new_chat_opens_on_its_reply_already_coming(new_context, alice, held_first_token):
    url, release = held_first_token
    page = new_context(alice, base_url=url).new_page()
    # At load, before the socket has said anything: is the reply shown as coming?
    page.add_init_script(
        """document.addEventListener("DOMContentLoaded", () => {
             window.__atLoad = !!document.querySelector("li.message.streaming"); });"""
    )
    page.goto("/")
    page.fill("#composer-input", "Start something new")
    page.press("#composer-input", "Enter")
    page.wait_for_url("**/conversations/*/")
    assert page.evaluate("() => window.__atLoad") is True
    live = page.locator("li.message.streaming")
    assert live.locator(".stream-text").inner_text() == ""  # the first token is still to come
    expect(page.locator("#stop-button")).to_be_visible()
    release()
    expect(page.locator("li.message.assistant[data-final='1']")).to_have_count(1, timeout=20_000)
    expect(live).to_have_count(0)


def test_a_refused_send_leaves_no_waiting_bubble_and_keeps_the_words(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Refused")
    Budget.objects.create(user=alice, monthly_tokens=10)
    record_usage(
        user_id=alice.pk,
        conversation_id=conversation.pk,
        model="offline",
        tokens=(10, 0),
        at=timezone.now(),
        replies=1,
    )
    page = new_context(alice).new_page()
    _open(page, conversation)
    page.fill("#composer-input", "One more, please")
    page.press("#composer-input", "Enter")
    expect(page.locator("#error-banner")).to_contain_text("budget")
    expect(page.locator("li.message.streaming")).to_have_count(0)
    assert page.input_value("#composer-input") == "One more, please"
    expect(page.locator("#stop-button")).to_be_hidden()


def _row(page, conversation):
    return page.locator(f'#sidebar-groups li[data-id="{conversation.id}"]')


def test_a_sidebar_rows_menu_renames_pins_moves_archives_and_deletes_without_opening(
    new_context, alice, page_errors
):
    here = services.create_conversation(user=alice, title="Where I am")
    other = services.create_conversation(user=alice, title="Trip to Jeju")
    doomed = services.create_conversation(user=alice, title="Old draft")
    page = new_context(alice).new_page()
    watch(page, page_errors)
    _open(page, here)
    row = _row(page, other)

    # Rename in place.
    row.hover()
    row.locator(".row-more").click()
    expect(page.locator("#row-menu")).to_be_visible()
    page.get_by_role("menuitem", name="Rename").click()
    page.locator(".row-rename").fill("Jeju in spring")
    page.keyboard.press("Enter")
    expect(row.locator("a")).to_have_text("Jeju in spring")
    expect(page.locator("#toast")).to_have_text("Renamed.")  # stored
    other.refresh_from_db()
    assert other.title == "Jeju in spring"
    assert page.url.endswith(f"/conversations/{here.id}/")  # never opened

    # Move to a new project made from the menu's dialog: a folder with a count of 1.
    row.locator("a").click(button="right")
    page.get_by_role("menuitem", name="Move to project…").click()
    page.select_option("#project-select", "new")
    page.fill("#project-name", "Travel")
    page.locator("#project-save").click()
    folder = page.locator(".project-folder", has_text="Travel")
    expect(folder.locator(".count")).to_have_text("1")
    other.refresh_from_db()
    assert other.project is not None and other.project.name == "Travel"

    # Pin (by keyboard: the context-menu key on the focused row), then archive.
    folder.locator("summary").click()  # the folder opens to show its chats
    _row(page, other).locator("a").focus()
    page.keyboard.press("Shift+F10")
    page.get_by_role("menuitem", name="Pin").click()
    expect(page.locator('[data-group="pinned"]')).to_contain_text("Jeju in spring")
    # Listed under Pinned, it is still the project's: the folder counts it, never "empty".
    expect(folder.locator(".count")).to_have_text("1")
    expect(folder.locator("li.empty")).to_have_text("Pinned, above.")
    other.refresh_from_db()
    assert other.pinned
    page.reload()
    folder.locator("summary").click()
    expect(folder.locator(".count")).to_have_text("1")
    expect(folder.locator("li.empty")).to_have_text("Pinned, above.")
    _row(page, other).locator("a").click(button="right")
    page.get_by_role("menuitem", name="Archive").click()
    expect(_row(page, other)).to_have_count(0)
    expect(folder.locator(".count")).to_have_text("0")
    expect(folder.locator("li.empty")).to_have_text("No conversations yet.")
    other.refresh_from_db()
    assert other.status == "archived"

    # Delete, after the confirmation.
    _row(page, doomed).locator("a").click(button="right")
    page.get_by_role("menuitem", name="Delete").click()
    page.locator("#confirm-ok").click()
    expect(_row(page, doomed)).to_have_count(0)
    assert not type(doomed).objects.filter(pk=doomed.pk).exists()
    assert page.url.endswith(f"/conversations/{here.id}/")
    assert page_errors == {"errors": [], "dialogs": []}


def test_a_project_is_made_from_the_sidebar_and_a_chat_moved_in_from_its_header(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Recipes")
    page = new_context(alice).new_page()
    _open(page, conversation)
    page.locator("#new-project").click()
    expect(page.locator("#project-choice")).to_be_hidden()
    page.fill("#project-name", "Cooking")
    page.locator("#project-save").click()
    folder = page.locator(".project-folder", has_text="Cooking")
    expect(folder.locator(".count")).to_have_text("0")
    page.locator("#conv-menu > summary").click()
    page.get_by_role("menuitem", name="Move to project…").click()
    page.select_option("#project-select", label="Cooking")
    page.locator("#project-save").click()
    expect(folder.locator(".count")).to_have_text("1")
    conversation.refresh_from_db()
    assert conversation.project.name == "Cooking"


WHITE, DARK_BG = "rgb(255, 255, 255)", "rgb(23, 24, 27)"


def test_the_theme_is_chosen_once_in_settings_and_every_page_follows(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Colours")
    page = new_context(alice, color_scheme="light").new_page()
    page.goto(f"/conversations/{conversation.id}/")
    expect(page.locator("body")).to_have_css("background-color", WHITE)  # the device's: light
    # Settings is in one place: the account menu (its tabs hold memory, tokens, usage).
    assert page.locator(".sidebar-links a", has_text="Settings").count() == 0
    page.locator("#account-menu > summary").click()
    page.locator("#settings-link").click()
    page.get_by_label("Dark", exact=True).check()
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash")).to_contain_text("Settings saved.")
    expect(page.locator("body")).to_have_css("background-color", DARK_BG)
    page.goto(f"/conversations/{conversation.id}/")
    assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
    expect(page.locator("body")).to_have_css("background-color", DARK_BG)
    alice.chat_settings.refresh_from_db()
    assert alice.chat_settings.theme == "dark"

    dark_device = new_context(alice, color_scheme="dark").new_page()
    dark_device.goto("/settings/")
    dark_device.get_by_label("Light", exact=True).check()
    dark_device.get_by_role("button", name="Save").click()
    expect(dark_device.locator(".flash")).to_contain_text("Settings saved.")
    expect(dark_device.locator("body")).to_have_css(
        "background-color", WHITE
    )  # chosen light wins over the device
    dark_device.get_by_label("As the device prefers").check()
    dark_device.get_by_role("button", name="Save").click()
    expect(dark_device.locator(".flash")).to_contain_text("Settings saved.")
    expect(dark_device.locator("body")).to_have_css("background-color", DARK_BG)


def _two_turns(alice):
    conversation = services.create_conversation(user=alice, title="A quiet page")
    for n in range(2):
        seed.add_message(conversation_id=conversation.id, role="user", content=f"Question {n}?")
        seed.add_message(conversation_id=conversation.id, role="assistant", content=f"Answer {n}.")
    return conversation


def test_a_messages_line_shows_on_hover_not_under_every_reply(new_context, alice):
    conversation = _two_turns(alice)
    page = new_context(alice, viewport={"width": 1400, "height": 900}).new_page()
    _open(page, conversation)
    last = page.locator("li.message.assistant").last
    expect(last.locator(".message-foot .meta")).to_have_css("opacity", "0")  # no permanent line
    expect(last.locator(".message-actions")).to_have_css("opacity", "1")  # the latest's actions
    last.hover()
    expect(last.locator(".message-foot .meta")).to_have_css("opacity", "1")


def test_on_a_phone_a_tap_shows_a_messages_actions_and_the_model_is_in_the_menu(new_context, alice):
    conversation = _two_turns(alice)
    page = new_context(alice, **PHONE).new_page()
    _open(page, conversation)
    first = page.locator("li.message.user").first
    latest = page.locator("li.message.assistant").last
    expect(first.locator(".message-actions")).to_be_hidden()
    expect(first.locator(".meta")).to_be_hidden()
    expect(latest.locator(".message-actions")).to_be_visible()
    first.locator(".bubble").tap()
    expect(first.locator(".message-actions")).to_be_visible()
    page.locator("li.message.assistant").first.locator(".bubble").tap()
    expect(first.locator(".message-actions")).to_be_hidden()  # one message at a time
    # The header keeps the title; the model is chosen in the ⋯ menu.
    assert page.locator(".conv-head > .model-picker, .conv-head > .model-name").count() == 0
    page.locator("#conv-menu > summary").tap()
    expect(page.locator("#conv-menu .menu-items .model-name")).to_be_visible()


def test_a_reply_that_saved_a_memory_says_so_and_links_to_it(new_context, alice):
    conversation = services.create_conversation(user=alice, title="About me")
    page = new_context(alice).new_page()
    _open(page, conversation)
    page.fill("#composer-input", "Please remember that my sister's name is Yuna.")
    page.press("#composer-input", "Enter")
    stored = page.locator("li.message.assistant[data-final='1']")
    expect(stored).to_have_count(1, timeout=20_000)
    chip = stored.locator(".memory-chip")
    expect(chip).to_have_text("Memory updated")
    chip.click()
    expect(page).to_have_url(re.compile(r"/settings/memory/$"))
    expect(page.locator("main")).to_contain_text("Yuna")
    # A reply that saved nothing shows no chip.
    _open(page, conversation)
    page.fill("#composer-input", "What is the capital of Canada?")
    page.press("#composer-input", "Enter")
    expect(page.locator("li.message.assistant[data-final='1']")).to_have_count(2, timeout=20_000)
    expect(page.locator("li.message.assistant").last.locator(".memory-chip")).to_have_count(0)


def test_editing_a_message_uses_the_columns_width_without_its_actions(new_context, alice):
    conversation = _two_turns(alice)
    page = new_context(alice, viewport={"width": 1400, "height": 900}).new_page()
    _open(page, conversation)
    first = page.locator("li.message.user").first
    first.hover()
    first.locator('[data-action="edit"]').click()
    editor = first.locator(".editor-input")
    expect(editor).to_be_focused()
    column = page.locator("#messages").bounding_box()["width"]
    assert editor.bounding_box()["width"] >= column * 0.95  # was ~240 px
    expect(first.locator(".message-actions")).to_be_hidden()
    page.keyboard.press("Escape")
    expect(first.locator(".message-actions")).to_be_attached()
    expect(first.locator(".editor")).to_have_count(0)


def test_ctrl_k_is_a_palette_that_finds_a_word_inside_a_message_and_opens_it(new_context, alice):
    found = services.create_conversation(user=alice, title="Weekend")
    seed.add_message(conversation_id=found.id, role="user", content="Where to eat?")
    hit = seed.add_message(
        conversation_id=found.id, role="assistant", content="부산에서는 밀면을 꼭 드셔 보세요."
    )
    services.create_conversation(user=alice, title="Taxes 2026")
    here = services.create_conversation(user=alice, title="Elsewhere")
    page = new_context(alice).new_page()
    _open(page, here)
    page.keyboard.press("Control+K")
    palette = page.locator("#palette")
    expect(page.locator("#palette-input")).to_be_focused()
    # Empty: actions and recent chats.
    expect(palette.locator("[role=option]", has_text="New chat")).to_have_count(1)
    expect(palette.locator("[role=option]", has_text="Taxes 2026")).to_have_count(1)
    # A title filters at once.
    page.keyboard.type("tax")
    expect(palette.locator(".palette-chat")).to_have_text(["Taxes 2026"])
    page.locator("#palette-input").fill("")
    # A Korean word inside a sentence, within 300 ms of the last key.
    page.evaluate(
        """() => { window.__typed = 0; window.__found = 0;
          document.getElementById("palette-input").addEventListener("input", () => {
            window.__typed = performance.now(); });
          new MutationObserver(() => {
            if (!window.__found && document.querySelector("#palette-list .palette-message mark"))
              window.__found = performance.now(); })
            .observe(document.getElementById("palette-list"), { childList: true, subtree: true });
        }"""
    )
    page.keyboard.type("밀면")
    message = palette.locator(".palette-message")
    expect(message).to_have_count(1)
    expect(message.locator("mark")).to_have_text("밀면")
    took = page.evaluate("() => window.__found - window.__typed")
    assert 0 < took < 300, took
    # Arrows move; Enter opens the message in its branch.
    chosen = page.locator("[role=option][aria-selected=true]")
    for _ in range(10):
        if "palette-message" in (chosen.get_attribute("class") or ""):
            break
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/conversations/{found.id}/\?m={hit.id}"))
    expect(page.locator(f"#msg-{hit.id}")).to_be_visible()
