"""In the browser: an Open WebUI export with a reasoning model's replies reads as the reply
with its thinking folded above it (no markup), and a file with a damaged conversation
imports the rest and names the one left out."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from conversations.models import Conversation

from .conftest import SCREENSHOTS, watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FIXTURES = Path(__file__).parents[1] / "conversations" / "import_fixtures"


def test_imported_reasoning_is_folded_above_a_clean_reply(new_context, alice, page_errors):
    page = new_context(alice).new_page()
    watch(page, page_errors)
    page.goto("/conversations/")
    page.set_input_files("#import-file", str(FIXTURES / "openwebui_reasoning.json"))
    expect(page.locator(".toast").last).to_contain_text("Imported 2 conversations", timeout=20_000)
    page.wait_for_load_state("load")
    page.get_by_role("link", name="Tomato care").first.click()
    reply = page.locator("li.message.assistant").first
    thinking = reply.locator("details.reasoning")
    expect(thinking.locator("summary")).to_have_text("Thought for 4 seconds")
    body = thinking.locator(".reasoning-body")
    expect(body).to_be_hidden()  # folded until asked for
    expect(reply.locator(".content")).to_have_text(
        "It is 31°C and sunny in Busan, so water your tomatoes every morning."
    )
    for markup in ("<details", "<summary", "Tool Executed", "&gt;", "Thought for 4 seconds\n"):
        assert markup not in reply.locator(".content").inner_text()
    thinking.locator("summary").click()
    expect(body).to_contain_text("I should check the forecast & answer.")
    # The cut reply offers to continue.
    cut = page.locator("li.message.assistant").last
    expect(cut.locator(".finish-note")).to_have_text("Interrupted.")
    expect(cut.locator('[data-action="continue"]')).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "import-reasoning-light.png"))
    assert page_errors == {"errors": [], "dialogs": []}


def test_a_damaged_conversation_is_named_and_the_rest_imported(new_context, alice, page_errors):
    page = new_context(alice, locale="ko-KR").new_page()
    watch(page, page_errors)
    page.goto("/conversations/")
    page.set_input_files("#import-file", str(FIXTURES / "chatgpt_one_damaged.json"))
    report = page.locator("#import-report")
    expect(report).to_be_visible(timeout=20_000)
    expect(report.locator("h2")).to_have_text("대화 3개를 가져왔습니다.")
    expect(report.locator(".import-skipped li")).to_have_text(["Broken entry"])
    assert "neither text" not in report.inner_text()  # the API's reason is for developers
    report.get_by_role("button").click()
    page.wait_for_load_state("load")
    expect(page.get_by_role("link", name="Train times").first).to_be_visible(timeout=10_000)
    assert Conversation.objects.filter(created_by=alice).count() == 3
    assert page_errors == {"errors": [], "dialogs": []}
