"""In the browser: a rating survives a reload; a share link opens for a stranger and
stops working once revoked; another app's export imports from the list page."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from conversations import services
from conversations.models import Conversation, MessageFeedback
from tests.support import seed

from .conftest import SCREENSHOTS, watch
from .test_chat import _open

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FIXTURES = Path(__file__).parents[1] / "conversations" / "import_fixtures"


def _talk(user, title: str) -> Conversation:
    conversation = services.create_conversation(user=user, title=title)
    seed.add_message(
        conversation_id=conversation.id,
        role="user",
        content="Where should we eat in Busan?",
        created_by=user,
    )
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content="Try **milmyeon** in Seomyeon:\n\n```python\nprint('맛있어요')\n```",
        model="offline",
        finish_reason="end_turn",
    )
    return conversation


def test_a_rating_is_still_pressed_after_a_reload(new_context, alice, page_errors):
    conversation = _talk(alice, "Food")
    page = _open(new_context, alice, conversation)
    watch(page, page_errors)
    reply = page.locator("li.message.assistant").last
    reply.hover()
    reply.locator('[data-action="down"]').click()
    # What went wrong: reason chips, and words if the person wants.
    page.locator("#feedback-dialog").get_by_text("Incorrect").click()
    page.locator("#feedback-dialog").get_by_text("Too long").click()
    page.fill("#feedback-comment", "Milmyeon is from Busan, fine, but say why.")
    page.locator("#feedback-dialog button[value='ok']").click()
    expect(reply.locator('[data-action="down"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator(".toast").last).to_contain_text("Thanks")
    stored = MessageFeedback.objects.get()
    assert (stored.rating, stored.reasons) == ("down", ["incorrect", "too_long"])
    assert stored.comment == "Milmyeon is from Busan, fine, but say why."
    # A thumbs-up asks nothing: it is recorded at once.
    reply.locator('[data-action="up"]').click()
    expect(reply.locator('[data-action="up"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#feedback-dialog")).to_be_hidden()
    stored.refresh_from_db()
    assert (stored.rating, stored.reasons, stored.comment) == ("up", [], "")
    reply.locator('[data-action="down"]').click()
    page.locator("#feedback-dialog button[value='ok']").click()  # no reason, no words
    expect(reply.locator('[data-action="down"]')).to_have_attribute("aria-pressed", "true")

    page.reload()
    reply = page.locator("li.message.assistant").last
    expect(reply.locator('[data-action="down"]')).to_have_attribute("aria-pressed", "true")
    expect(reply.locator('[data-action="up"]')).to_have_attribute("aria-pressed", "false")
    assert page_errors == {"errors": [], "dialogs": []}


def test_a_share_link_opens_for_a_stranger_until_revoked(new_context, alice, page_errors):
    conversation = _talk(alice, "Busan food tour")
    page = _open(new_context, alice, conversation)
    watch(page, page_errors)
    page.locator("#conv-menu > summary").click()
    page.get_by_role("menuitem", name="Share…").click()
    page.locator("#share-create").click()
    expect(page.locator("#share-list li")).to_have_count(1)
    url = page.locator("#share-list li .share-url").first.inner_text()
    assert "/s/" in url

    stranger = new_context().new_page()  # no login, no cookies
    watch(stranger, page_errors)
    response = stranger.goto(url)
    assert response.status == 200
    expect(stranger.locator("h1")).to_have_text("Busan food tour")
    expect(stranger.locator(".message.assistant strong")).to_have_text("milmyeon")
    expect(stranger.locator(".message.assistant pre")).to_contain_text("맛있어요")
    expect(stranger.locator("textarea")).to_have_count(0)
    expect(stranger.locator("footer")).to_contain_text("Made with")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    stranger.screenshot(path=str(SCREENSHOTS / "shared-light.png"), full_page=True)

    page.locator("#share-list li button.danger").click()
    page.locator("#confirm-ok").click()
    expect(page.locator("#share-list li")).to_have_count(0)
    assert stranger.goto(url).status == 404
    assert page_errors == {"errors": [], "dialogs": []}


def test_import_a_chatgpt_export_from_the_list_page(new_context, alice, page_errors):
    page = new_context(alice).new_page()
    watch(page, page_errors)
    page.goto("/conversations/")
    page.set_input_files("#import-file", str(FIXTURES / "chatgpt_conversations.json"))
    expect(page.locator(".toast").last).to_contain_text("Imported 2 conversations", timeout=20_000)
    page.wait_for_load_state("load")
    expect(page.get_by_role("link", name="Dog names").first).to_be_visible(timeout=10_000)
    assert set(Conversation.objects.filter(created_by=alice).values_list("title", flat=True)) == {
        "Dog names",
        "자기소개",
    }
    assert page_errors == {"errors": [], "dialogs": []}


def test_a_card_number_is_highlighted_then_masked_and_sent(new_context, alice, page_errors):
    conversation = services.create_conversation(user=alice, title="Payment")
    page = _open(new_context, alice, conversation)
    watch(page, page_errors)
    page.fill("#composer-input", "결제는 4111 1111 1111 1111 카드로 해 줘")
    page.press("#composer-input", "Enter")
    panel = page.locator("#sensitive-panel")
    expect(panel).to_be_visible()
    expect(panel.locator("mark.sensitive")).to_have_text("4111 1111 1111 1111")
    expect(panel).to_contain_text("card number")
    assert not conversation.messages.exists()  # nothing stored, nothing sent to the model
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "sensitive-light.png"))
    page.locator("#sensitive-mask").click()
    expect(panel).to_be_hidden()
    expect(page.locator("li.message.user .content").last).to_have_text("결제는 [card] 카드로 해 줘")
    expect(page.locator("li.message.assistant[data-final='1']")).to_have_count(1, timeout=20_000)
    question = conversation.messages.get(role="user")
    assert question.content == "결제는 [card] 카드로 해 줘"
    assert "sensitive" not in question.metadata
    assert page_errors == {"errors": [], "dialogs": []}


PASTE_IMAGE = """async () => {
  const canvas = document.createElement("canvas");
  canvas.width = 60; canvas.height = 40;
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#c33"; ctx.fillRect(0, 0, 60, 40);
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
  const data = new DataTransfer();
  data.items.add(new File([blob], "pasted.png", { type: "image/png" }));
  const init = { clipboardData: data, bubbles: true, cancelable: true };
  const event = new ClipboardEvent("paste", init);
  document.getElementById("composer-input").dispatchEvent(event);
}"""


def test_paste_an_image_see_it_waiting_send_it_see_it_in_the_message(
    new_context, alice, page_errors
):
    from conversations.models import Attachment

    conversation = services.create_conversation(user=alice, title="Picture")
    page = _open(new_context, alice, conversation)
    watch(page, page_errors)
    page.evaluate(PASTE_IMAGE)
    waiting = page.locator("#attachment-strip li")
    expect(waiting).to_have_count(1)
    expect(waiting).not_to_have_class("uploading")
    expect(waiting.locator("img")).to_be_visible()
    page.fill("#composer-input", "what colour is this?")
    page.press("#composer-input", "Enter")
    sent = page.locator("li.message.user .attachments img")
    expect(sent).to_be_visible(timeout=10_000)
    expect(page.locator("#attachment-strip")).to_be_hidden()
    # The image itself, served to its owner (waited for: "visible" comes before "loaded").
    page.wait_for_function(
        "() => document.querySelector('li.message.user .attachments img')?.naturalWidth === 60"
    )
    (stored,) = Attachment.objects.all()
    assert stored.message.content == "what colour is this?" and stored.kind == "image"
    page.reload()
    expect(page.locator("li.message.user .attachments img")).to_have_attribute("alt", "pasted.png")
    assert page_errors == {"errors": [], "dialogs": []}
