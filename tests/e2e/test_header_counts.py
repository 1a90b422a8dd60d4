"""The header's "N messages · M tokens" adds up with the messages the page shows: while a
reply streams, once it is stored, after a regenerate (another branch) and after a reload."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from conversations import services
from conversations.models import Message

from .conftest import watch
from .test_chat import _open, _send

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Every frame, the page's own view: the header's count against the messages in the list
# (the reply being written is one of them). Mismatches and the counts seen are recorded.
CHECK_EVERY_FRAME = """() => {
  const seen = window.countCheck = { mismatches: [], counts: new Set(), streamed: 0 };
  const list = document.getElementById("messages");
  const stats = document.getElementById("conv-stats");
  function check() {
    const shown = list.querySelectorAll(":scope > li.message").length;
    const streaming = list.querySelectorAll(":scope > li.message.streaming").length;
    const number = (stats.textContent.match(/^([\\d,]+) message/) || [])[1] || "";
    const counted = Number(number.replace(/,/g, ""));
    if (counted !== shown) seen.mismatches.push(`${stats.textContent} with ${shown} shown`);
    seen.counts.add(shown);
    if (streaming) seen.streamed += 1;
    requestAnimationFrame(check);
  }
  requestAnimationFrame(check);
}"""


def _shown_tokens(page) -> int:
    return page.evaluate(
        """() => [...document.querySelectorAll("#messages > li.message")]
             .reduce((n, li) => n + (Number(li.dataset.tokens) || 0), 0)"""
    )


def _branch(conversation) -> list[Message]:
    conversation.refresh_from_db()
    path, node = [], conversation.current_message
    while node is not None:
        path.append(node)
        node = node.parent
    return path


def _click(item, action: str) -> None:
    item.hover()
    item.locator(f"button[data-action='{action}']").first.click()


def test_the_header_counts_what_is_shown_while_and_after_a_reply_streams(
    new_context, alice, page_errors
):
    conversation = services.create_conversation(user=alice, title="Counting live")
    page = _open(new_context, alice, conversation)
    watch(page, page_errors)
    expect(page.locator("#conv-stats")).to_have_text("0 messages · 0 tokens")
    page.evaluate(CHECK_EVERY_FRAME)

    _send(page, "Please tell me a long story about the quick brown fox and the lazy dog")
    expect(page.locator("li.message.streaming .stream-text")).not_to_be_empty()
    # The reply being written is a message shown: counted at once, not when it is stored.
    expect(page.locator("#conv-stats")).to_contain_text("2 messages ·")
    expect(page.locator("li.message.assistant[data-final='1']")).to_have_count(1, timeout=20_000)
    expect(page.locator("li.message.streaming")).to_have_count(0)
    branch = _branch(conversation)
    tokens = sum(m.tokens_used for m in branch)
    conversation.refresh_from_db()
    assert len(branch) == conversation.message_count == 2
    assert tokens == conversation.total_tokens_used == _shown_tokens(page)
    # The question's count is our estimate (no server counts a message's share of a prompt).
    expect(page.locator("#conv-stats")).to_have_text(f"2 messages · ≈ {tokens:,} tokens")

    # A regenerate: three messages in the conversation, two on the branch the page shows.
    reply = page.locator("li.message.assistant[data-final='1']").last
    _click(reply, "regenerate")
    expect(page.locator("li.message.assistant .version-count")).to_have_text("2/2", timeout=20_000)
    expect(page.locator("li.message.streaming")).to_have_count(0, timeout=20_000)
    branch = _branch(conversation)
    tokens = sum(m.tokens_used for m in branch)
    assert conversation.message_count == 3 and len(branch) == 2
    expect(page.locator("#conv-stats")).to_have_text(f"2 messages · ≈ {tokens:,} tokens")

    check = page.evaluate(
        "() => ({ ...window.countCheck, counts: [...window.countCheck.counts].sort() })"
    )
    assert check["mismatches"] == [] and check["streamed"] > 0
    assert 2 in check["counts"]
    page.reload()
    expect(page.locator("#conv-stats")).to_have_text(f"2 messages · ≈ {tokens:,} tokens")
    assert page_errors["errors"] == []

    korean = new_context(alice, locale="ko-KR").new_page()
    korean.goto(f"/conversations/{conversation.id}/")
    expect(korean.locator("#conv-stats")).to_have_text(f"메시지 2개 · 토큰 약 {tokens:,}개")
