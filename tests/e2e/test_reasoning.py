"""A model's reasoning in the browser: shown live under "Thinking…", folded under "Thought
for N seconds" once the answer starts, in every dialect a server sends it; never in the
reply's words."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from conversations import services
from tests.support.dialects import DIALECTS
from tests.support.openai_replies import Reply

from .conftest import SCREENSHOTS, watch
from .test_chat import _open, _send

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REASONING = "Six times seven: six sevens are forty-two. Let me double-check that sum."
ANSWER = "The answer is 42."


@pytest.mark.parametrize(
    ("dialect", "locale", "thinking", "thought"),
    [
        ("llamacpp", "en-US", "Thinking…", r"Thought for \d+ seconds?"),
        ("vllm", "en-US", "Thinking…", r"Thought for \d+ seconds?"),
        ("think", "ko-KR", "생각하는 중…", r"\d+초 동안 생각함"),
    ],
)
def test_reasoning_shows_live_then_folds_when_the_answer_starts(
    new_context, model_server, alice, page_errors, dialect, locale, thinking, thought
):
    url, fake = model_server
    fake.dialect = DIALECTS[dialect]
    try:
        # Slow enough to watch it think: ~3 s of reasoning, then the answer.
        fake.enqueue(Reply(text=ANSWER, reasoning=REASONING, chars_per_second=25, chunk_chars=3))
        conversation = services.create_conversation(user=alice, title="Arithmetic")
        page = _open(new_context, alice, conversation, base_url=url, locale=locale)
        watch(page, page_errors)
        _send(page, "What is 6 * 7?")
        live = page.locator("li.message.streaming details.reasoning")
        expect(live).to_be_visible(timeout=10_000)
        expect(live.locator("summary")).to_have_text(thinking)
        expect(live).to_have_attribute("open", "")
        expect(live.locator(".reasoning-body")).to_contain_text("Six times seven")
        if dialect == "think":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "reasoning-live-ko.png"))
        reply = page.locator("li.message.assistant[data-final='1']").last
        expect(reply.locator(".content")).to_have_text(ANSWER, timeout=20_000)
        folded = reply.locator("details.reasoning")
        expect(folded.locator("summary")).to_have_text(re.compile(thought))
        expect(folded).not_to_have_attribute("open", "")
        assert "<think>" not in reply.inner_text() and "think>" not in reply.inner_text()
        folded.locator("summary").click()
        expect(folded.locator(".reasoning-body")).to_contain_text("forty-two")
        assert page_errors == {"errors": [], "dialogs": []}
    finally:
        fake.dialect = DIALECTS["openai"]
