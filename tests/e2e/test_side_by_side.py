"""Side by side in the browser: two models answer at once in two columns (stacked on a
phone); keeping one makes it the branch, the other stays a sibling version."""

from __future__ import annotations

import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from conversations import services
from conversations.models import Conversation
from tests.support.openai_replies import Reply

from .conftest import SCREENSHOTS, watch
from .test_accessibility import AXE_OPTIONS, describe, failing
from .test_chat import _open

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def _answers(body):
    return Reply(text=f"{body['model']} says: " + "word " * 40, chars_per_second=150)


def _ask(page, text: str) -> None:
    page.fill("#composer-input", text)
    page.locator("#send-button").click()  # on a touch screen Enter adds a line


def _both_streaming(page) -> None:
    page.wait_for_function(
        "() => [...document.querySelectorAll('#messages > li.lane.streaming .stream-text')]"
        ".filter((n) => n.textContent.length > 0).length === 2"
    )


@pytest.mark.parametrize(
    ("viewport", "scheme", "locale"),
    [(None, "light", "en-US"), (PHONE, "dark", "ko-KR")],
    ids=["desktop-light-en", "phone-dark-ko"],
)
def test_two_answers_stream_side_by_side_and_keeping_one_makes_it_the_branch(
    new_context, model_server, alice, page_errors, viewport, scheme, locale
):
    url, fake = model_server
    fake.responder = _answers
    conversation = services.create_conversation(user=alice, title="Compare")
    extra = {"viewport": viewport, "has_touch": True} if viewport else {}
    page = _open(
        new_context, alice, conversation, base_url=url, color_scheme=scheme, locale=locale, **extra
    )
    watch(page, page_errors)
    if viewport:  # on a phone the pickers are in the ⋯ menu
        page.locator("#conv-menu > summary").click()
    page.locator("#compare-select").select_option("fake-large")
    if viewport:
        page.locator("#conv-menu > summary").click()
    expect(page.locator("#composer-input")).to_have_attribute(
        "placeholder", re.compile("fake-small.*fake-large")
    )
    _ask(page, "Which is better?")
    lanes = page.locator("#messages > li.lane")
    expect(lanes).to_have_count(2)
    _both_streaming(page)  # at once, not one after the other
    first, second = lanes.nth(0).bounding_box(), lanes.nth(1).bounding_box()
    if viewport:  # stacked
        assert abs(first["x"] - second["x"]) < 2 and second["y"] >= first["y"] + first["height"]
    else:  # side by side
        assert abs(first["y"] - second["y"]) < 2 and second["x"] >= first["x"] + first["width"]
    expect(page.locator("#messages > li.lane[data-final='1']")).to_have_count(2, timeout=20_000)
    expect(lanes.nth(0).locator(".lane-model")).to_have_text("fake-small")
    expect(lanes.nth(1).locator(".lane-model")).to_have_text("fake-large")
    expect(lanes.nth(0).locator(".content")).to_contain_text("fake-small says")
    expect(lanes.nth(1).locator(".content")).to_contain_text("fake-large says")
    expect(page.locator("#stop-button")).to_be_hidden()
    keep = "이 답 남기기" if locale.startswith("ko") else "Keep this"
    expect(lanes.nth(1).locator(".lane-keep")).to_have_text(keep)
    page.wait_for_timeout(300)
    name = f"side-by-side-{'phone' if viewport else 'desktop'}-{scheme}-{locale[:2]}.png"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name))
    found = [v for v in Axe().run(page, options=AXE_OPTIONS).response["violations"] if failing(v)]
    assert not found, describe(found)

    # The one stored second stands aside; keeping it makes it the branch.
    aside = page.locator("#messages > li.lane[data-aside]")
    expect(aside).to_have_count(1)
    kept = aside.get_attribute("data-id")
    aside.locator(".lane-keep").click()
    expect(lanes).to_have_count(0)
    expect(page.locator("#messages > li.message.assistant")).to_have_count(1)
    expect(page.locator(f"#msg-{kept}")).to_be_visible()
    conversation = Conversation.objects.get(pk=conversation.pk)
    assert str(conversation.current_message_id) == kept
    expect(page.locator(f"#msg-{kept} .version-count")).to_have_text(re.compile(r"^\d/2$"))

    # Switched off, the next message has one answer again, following the one kept.
    if viewport:
        page.locator("#conv-menu > summary").click()
    page.locator("#compare-select").select_option("")
    if viewport:
        page.locator("#conv-menu > summary").click()
    _ask(page, "And now?")
    expect(page.locator("#messages > li.message.assistant[data-final='1']")).to_have_count(
        2, timeout=20_000
    )
    expect(lanes).to_have_count(0)
    assert fake.chat_requests()[-1]["model"] == "fake-small"
    assert page_errors == {"errors": [], "dialogs": []}
