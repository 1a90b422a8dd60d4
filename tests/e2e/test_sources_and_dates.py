"""The face, round 2 (issue 56), item 6 and the dates: a reply's sources as numbered chips
whose numbers in the text open the passage, and every date on a screen written one way."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from accounts.tokens import create_api_token
from conversations import services
from tests.support import seed

from .test_face_round2 import _open, _two_turns

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_replys_sources_are_numbered_chips_and_its_numbers_open_the_passage(new_context, alice):
    from knowledge.services import upload_document

    text = "# Travel\n\n## Per diem\nThe per diem is 87 euros.\n\n## Booking\nBook 14 days ahead.\n"
    document = upload_document(user=alice, filename="travel.md", data=text.encode(), title="Travel")
    url = f"/documents/{document.id}/#section-1"
    conversation = services.create_conversation(user=alice, title="Cited")
    seed.add_message(conversation_id=conversation.id, role="user", content="Per diem?")
    source = {"n": 1, "document_id": str(document.id), "document_title": "Travel", "url": url}
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content="It is 87 euros [1].",
        parts=[
            {"type": "references", "items": [{**source, "section": "Per diem"}]},
            {"type": "thinking", "step": "route", "code": "route.documents", "params": {}},
        ],
    )
    page = new_context(alice).new_page()
    _open(page, conversation)
    reply = page.locator("li.message.assistant")
    chip = reply.locator("ol.sources a.source")
    expect(chip).to_have_count(1)
    expect(chip).to_contain_text("1Travel")
    expect(chip).to_be_visible()  # under the answer, not folded away in Details
    cite = reply.locator(".content a.cite")
    expect(cite).to_have_text("1")
    expect(reply.locator(".content")).to_have_text("It is 87 euros 1.")
    # "Details" says it opens: a chevron that turns.
    chevron = reply.locator(".details > summary > svg")
    expect(chevron).to_be_visible()
    reply.locator(".details > summary").click()
    assert "matrix" in chevron.evaluate("e => getComputedStyle(e).transform")
    with page.context.expect_page() as opened:
        cite.click()
    passage = opened.value
    passage.wait_for_load_state()
    assert passage.url.endswith(url)
    expect(passage.locator("#section-1")).to_contain_text("87 euros")


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
def test_every_date_on_a_screen_is_written_one_way_in_the_readers_zone(new_context, alice, locale):
    conversation = _two_turns(alice)
    create_api_token(user=alice, name="laptop")
    page = new_context(alice, locale=locale, timezone_id="Asia/Seoul").new_page()
    for path in (f"/conversations/{conversation.id}/", "/conversations/", "/settings/tokens/"):
        page.goto(path)
        dated = 'time[datetime]:not([datetime=""])'
        expect(page.locator(dated).first).to_have_attribute("data-localized", re.compile("."))
        shown = page.evaluate(
            """(dated) => [...document.querySelectorAll(dated)].map((t) => [t.textContent,
                new Intl.DateTimeFormat(document.documentElement.lang, t.dataset.style === "date"
                  ? {dateStyle: "medium"} : {dateStyle: "medium", timeStyle: "short",
                  timeZone: "Asia/Seoul"}).format(new Date(t.dateTime))])""",
            dated,
        )
        assert shown and all(text == expected for text, expected in shown), (path, shown)


def test_a_live_answer_from_a_document_shows_its_source_and_links_its_number(new_context, alice):
    from knowledge.services import upload_document

    text = "# Travel\n\n## Per diem\nEmployees abroad receive a per diem of 87 euros for meals.\n"
    upload_document(user=alice, filename="travel.md", data=text.encode(), title="Travel handbook")
    conversation = services.create_conversation(user=alice, title="Live cite")
    page = new_context(alice).new_page()
    _open(page, conversation)
    page.fill("#composer-input", "What do my documents say about the per diem for meals?")
    page.press("#composer-input", "Enter")
    live = page.locator("li.message.streaming ol.sources a.source")
    expect(live).to_contain_text("Travel handbook", timeout=20_000)  # while it is written
    stored = page.locator("li.message.assistant[data-final='1']")
    expect(stored).to_have_count(1, timeout=20_000)
    expect(stored.locator("ol.sources a.source")).to_have_count(1)
    cite = stored.locator(".content a.cite")
    expect(cite).to_have_text("1")
    assert re.search(r"^/documents/[0-9a-f-]+/#section-\d+$", cite.get_attribute("href"))
    expect(stored.locator(".content")).to_contain_text("87 euros")
