"""The app shell as a person meets it: a landing that is a composer, the sidebar, the ⋯ menu,
pins, temporary chats, the share dialog, previews, the summary card, the phone layout, the
queue of messages written while a reply streams, and the keyboard."""

from __future__ import annotations

import base64

import pytest
from playwright.sync_api import expect

from conversations import services
from conversations.models import Conversation, Message
from conversations.shares import create_share
from tests.support import seed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
# A 2x2 red PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)


def _console_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def _ready(page):
    expect(page.locator("#composer-input")).to_be_enabled()
    page.wait_for_function("() => window.chatSocket && window.chatSocket.isOpen")


def _wait_replies(page, count: int = 1) -> None:
    expect(page.locator("li.message.assistant[data-final='1']")).to_have_count(
        count, timeout=20_000
    )
    expect(page.locator("li.message.streaming")).to_have_count(0)


def _rows(user) -> int:
    return Conversation.objects.filter(created_by=user).count()


def test_landing_is_a_composer_and_the_first_message_creates_one_conversation(
    new_context, alice, live_server_url
):
    context = new_context(alice)
    page = context.new_page()
    errors = _console_errors(page)
    page.goto("/")
    expect(page.locator("#composer-input")).to_be_focused()
    expect(page.get_by_text("What can I help with?")).to_be_visible()
    # Opening "/" and pressing New chat twice stores nothing.
    page.locator("#new-chat").click()
    page.locator("#new-chat").click()
    expect(page.locator("#composer-input")).to_be_visible()
    assert _rows(alice) == 0
    # A second tab watches the sidebar.
    watcher = context.new_page()
    watcher.goto("/settings/")
    expect(watcher.locator(".sidebar-empty")).to_be_visible()

    page.fill("#composer-input", "Plan a picnic for Saturday")
    page.press("#composer-input", "Enter")
    page.wait_for_url("**/conversations/*/")
    _wait_replies(page)
    assert _rows(alice) == 1
    conversation = Conversation.objects.get(created_by=alice)
    assert list(
        conversation.messages.values_list("role", flat=True).order_by("sequence_number")
    ) == [
        "user",
        "assistant",
    ]
    expect(page.locator("li.message.user .content")).to_have_text("Plan a picnic for Saturday")
    # The sidebar of the other tab shows it without a reload, the current page marks it.
    expect(watcher.locator(f'#sidebar li[data-id="{conversation.id}"]')).to_be_visible(
        timeout=10_000
    )
    expect(watcher.locator(".sidebar-empty")).to_be_hidden()
    expect(
        page.locator(f'#sidebar li[data-id="{conversation.id}"] a[aria-current="page"]')
    ).to_be_visible()
    assert errors == []


def test_old_list_links_redirect_to_all_conversations(new_context, alice):
    services.create_conversation(user=alice, title="Budget review")
    page = new_context(alice).new_page()
    page.goto("/?q=Budget&sort=created_at")
    assert "/conversations/?" in page.url
    expect(page.get_by_role("heading", name="All conversations")).to_be_visible()
    expect(page.locator("#conversation-rows")).to_contain_text("Budget review")


def test_pin_puts_the_conversation_in_the_pinned_section(new_context, alice):
    pinned = services.create_conversation(user=alice, title="Keep me on top")
    services.create_conversation(user=alice, title="Another one")
    page = new_context(alice).new_page()
    page.goto(f"/conversations/{pinned.id}/")
    pinned_section = page.locator('#sidebar [data-group="pinned"]')
    expect(pinned_section).to_be_hidden()
    page.locator("#conv-menu summary").click()
    page.locator("#pin-button").click()
    expect(pinned_section).to_be_visible()
    expect(pinned_section).to_contain_text("Keep me on top")
    pinned.refresh_from_db()
    assert pinned.pinned is True
    page.reload()
    expect(pinned_section).to_contain_text("Keep me on top")
    page.locator("#conv-menu summary").click()
    expect(page.locator("#pin-button")).to_have_text("Unpin")
    page.locator("#pin-button").click()
    expect(pinned_section).to_be_hidden()
    pinned.refresh_from_db()
    assert pinned.pinned is False


def test_temporary_chat_leaves_no_row_in_lists_search_or_memory(new_context, alice):
    page = new_context(alice).new_page()
    page.goto("/")
    page.locator("#temporary-toggle").click()
    expect(page.locator("#temporary-toggle")).to_have_attribute("aria-pressed", "true")
    page.fill("#composer-input", "My dog's name is Zorbaquix, remember it")
    page.press("#composer-input", "Enter")
    page.wait_for_url("**/conversations/*/")
    _wait_replies(page)
    expect(page.locator(".banner.temporary")).to_be_visible()
    conversation = Conversation.objects.get(created_by=alice)
    assert conversation.temporary is True
    # Not listed, not found, not in the sidebar, nothing remembered (asked as the user).
    api = page.request
    assert api.get("/api/v1/conversations").json()["items"] == []
    assert api.get("/api/v1/search/messages?q=Zorbaquix").json()["items"] == []
    assert api.get("/api/v1/memories").json()["items"] == []
    expect(page.locator(f'#sidebar li[data-id="{conversation.id}"]')).to_have_count(0)
    expect(page.locator("#share-button")).to_have_count(0)


def test_share_dialog_buttons_are_wider_than_tall_and_the_link_reads_whole(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Shared")
    seed.add_message(conversation_id=conversation.id, role=Message.Role.USER, content="hello")
    for made, viewport in enumerate(({"width": 1400, "height": 900}, PHONE), 1):
        page = new_context(alice, viewport=viewport).new_page()
        page.goto(f"/conversations/{conversation.id}/")
        page.locator("#conv-menu summary").click()
        page.locator("#share-button").click()
        page.locator("#share-create").click()
        # The list is drawn again once the new link is made (the first pass's link is
        # listed before it): read it after that, not in the middle of it.
        expect(page.locator("#share-list li")).to_have_count(made)
        item = page.locator("#share-list li").first
        expect(item).to_be_visible()
        for name in ("Copy", "Revoke"):
            box = item.get_by_role("button", name=name).bounding_box()
            assert box["width"] > box["height"], (name, viewport, box)
        link = item.locator(".share-url")
        full = link.inner_text()
        assert full.startswith("http") and "/s/" in full and full == link.get_attribute("href")
        # The whole link shows, wrapped if need be: nothing cut off or scrolled away.
        assert link.evaluate("(a) => a.scrollWidth <= a.clientWidth + 1"), viewport
        assert link.bounding_box()["x"] + link.bounding_box()["width"] <= viewport["width"]


def test_a_link_made_while_the_list_is_on_its_way_stays_listed(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Shared")
    seed.add_message(conversation_id=conversation.id, role=Message.Role.USER, content="hello")
    create_share(user=alice, conversation_id=conversation.id)
    page = new_context(alice).new_page()
    # The listing is read before the new link exists and lands after it is made.
    held = []
    page.route("**/api/v1/shares?*", lambda route: held.append((route, route.fetch())))
    page.goto(f"/conversations/{conversation.id}/")
    _ready(page)
    page.locator("#conv-menu summary").click()
    page.locator("#share-button").click()
    while not held:  # the listing is fetched, and held back
        page.wait_for_timeout(20)
    with page.expect_response(lambda r: r.request.method == "POST" and "/shares" in r.url):
        page.locator("#share-create").click()
    assert len(held) == 1
    route, response = held[0]
    assert len(response.json()["items"]) == 1  # read before the new link existed
    route.fulfill(response=response)
    expect(page.locator("#share-list li")).to_have_count(2)


def test_an_attached_image_previews_without_a_console_error(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Picture")
    page = new_context(alice).new_page()
    errors = _console_errors(page)
    page.goto(f"/conversations/{conversation.id}/")
    _ready(page)
    page.set_input_files(
        "#attach-input", files=[{"name": "dot.png", "mimeType": "image/png", "buffer": PNG}]
    )
    preview = page.locator("#attachment-strip img")
    expect(preview).to_be_visible()
    page.wait_for_function(
        "() => { const i = document.querySelector('#attachment-strip img');"
        " return i && i.complete && i.naturalWidth > 0; }"
    )
    expect(page.locator("#attachment-strip li.uploading")).to_have_count(0)
    assert errors == []


def test_the_summary_card_pushes_the_chat_down_instead_of_covering_it(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Long talk")
    for n in range(6):
        role = Message.Role.USER if n % 2 == 0 else Message.Role.ASSISTANT
        seed.add_message(
            conversation_id=conversation.id, role=role, content=f"Point number {n} of the plan."
        )
    page = new_context(alice).new_page()
    page.goto(f"/conversations/{conversation.id}/")
    _ready(page)
    page.locator("#conv-menu summary").click()
    page.locator("#summarize-button").click()
    card = page.locator("#summary-panel")
    expect(card).to_be_visible(timeout=20_000)
    page.locator("#scroller").evaluate("(s) => { s.scrollTop = 0; }")
    card_box = card.bounding_box()
    first = page.locator("li.message").first.bounding_box()
    assert first["y"] >= card_box["y"] + card_box["height"], (card_box, first)
    # Nothing stands over the first message: the point at its centre is inside it.
    inside = page.evaluate(
        """([x, y]) => Boolean(document.elementFromPoint(x, y)?.closest('li.message'))""",
        [first["x"] + first["width"] / 2, first["y"] + min(first["height"] / 2, 10)],
    )
    assert inside


def test_on_a_phone_the_header_is_one_row_and_the_first_message_shows_at_once(new_context, alice):
    conversation = services.create_conversation(
        user=alice, title="A rather long title for a phone screen"
    )
    seed.add_message(conversation_id=conversation.id, role=Message.Role.USER, content="First words")
    seed.add_message(
        conversation_id=conversation.id, role=Message.Role.ASSISTANT, content="A reply"
    )
    page = new_context(alice, viewport=PHONE).new_page()
    page.goto(f"/conversations/{conversation.id}/")
    _ready(page)
    header = page.locator(".topbar").bounding_box()
    assert header["height"] <= 60, header
    # The drawer is closed: the sidebar is off screen.
    expect(page.locator("#sidebar")).not_to_be_in_viewport()
    first = page.locator("li.message").first
    expect(first).to_be_in_viewport()
    assert first.bounding_box()["y"] < PHONE["height"] / 2
    page.locator(".sidebar-toggle").click()
    expect(page.locator("#sidebar")).to_be_in_viewport()
    page.keyboard.press("Escape")
    expect(page.locator("#sidebar")).not_to_be_in_viewport()


def test_all_conversations_on_a_phone_lists_before_the_filters(new_context, alice):
    services.create_conversation(user=alice, title="Phone row")
    page = new_context(alice, viewport=PHONE).new_page()
    page.goto("/conversations/")
    expect(page.locator("#filter-panel .filter-grid")).to_be_hidden()
    row = page.locator("#conversation-rows li.row-item").first
    expect(row).to_be_in_viewport()


def test_a_message_written_while_a_reply_streams_waits_and_is_sent_after(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Queue")
    page = new_context(alice).new_page()
    errors = _console_errors(page)
    page.goto(f"/conversations/{conversation.id}/")
    _ready(page)
    page.fill("#composer-input", "Please write me a long story about a lighthouse keeper")
    page.press("#composer-input", "Enter")
    expect(page.locator("li.message.streaming")).to_have_count(1)
    expect(page.locator("#composer-input")).to_be_enabled()
    page.fill("#composer-input", "And then a second question")
    page.press("#composer-input", "Enter")
    queued = page.locator("#queue li")
    expect(queued).to_have_count(1)
    expect(queued).to_contain_text("And then a second question")
    expect(page.locator("#error-banner")).to_be_hidden()
    _wait_replies(page, 2)
    expect(queued).to_have_count(0)
    users = list(
        Message.objects.filter(conversation=conversation, role="user")
        .order_by("sequence_number")
        .values_list("content", flat=True)
    )
    assert users == [
        "Please write me a long story about a lighthouse keeper",
        "And then a second question",
    ]
    assert errors == []


def test_a_queued_message_can_be_cancelled(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Cancel queue")
    page = new_context(alice).new_page()
    page.goto(f"/conversations/{conversation.id}/")
    _ready(page)
    page.fill("#composer-input", "Tell me a long story about the sea and its sailors")
    page.press("#composer-input", "Enter")
    expect(page.locator("li.message.streaming")).to_have_count(1)
    page.fill("#composer-input", "never mind this one")
    page.press("#composer-input", "Enter")
    page.locator("#queue li").get_by_role("button", name="Cancel").click()
    expect(page.locator("#queue li")).to_have_count(0)
    _wait_replies(page, 1)
    page.wait_for_timeout(500)
    assert not Message.objects.filter(
        conversation=conversation, content="never mind this one"
    ).exists()


def test_keyboard_reaches_new_chat_search_and_the_shortcut_list(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Keys")
    page = new_context(alice).new_page()
    page.goto(f"/conversations/{conversation.id}/")
    _ready(page)
    page.locator("#scroller").focus()
    page.keyboard.press("?")
    expect(page.locator("#shortcuts-dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts-dialog")).to_be_hidden()
    page.keyboard.press("Control+K")
    expect(page.locator("#palette-input")).to_be_focused()  # the command palette
    page.keyboard.press("Escape")
    expect(page.locator("#palette")).to_be_hidden()
    page.keyboard.press("Shift+Escape")
    expect(page.locator("#composer-input")).to_be_focused()
    # The ⋯ menu opens from the keyboard and Esc closes it, focus back on its button.
    page.locator("#conv-menu summary").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#conv-menu .menu-items")).to_be_visible()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Escape")
    expect(page.locator("#conv-menu .menu-items")).to_be_hidden()
    expect(page.locator("#conv-menu summary")).to_be_focused()
    page.keyboard.press("Control+Shift+O")
    expect(page.locator("#landing")).to_be_visible()
    assert page.url.endswith(":" + page.url.split(":")[-1].split("/")[0] + "/")
