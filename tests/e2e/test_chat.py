"""Live chat in the browser: streaming, stop, reload mid-reply, two tabs, fork,
summarize, export, search. These need the websocket layer, the agent and the API."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from conversations import services
from conversations.models import Message
from tests.support import seed

from .conftest import watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_PROMPT = (
    "Please repeat this back to me slowly: the quick brown fox jumps over the lazy dog "
    "while the five boxing wizards jump quickly and the sphinx of black quartz judges my vow."
)


def _open(new_context, user, conversation, **kwargs):
    page = new_context(user, **kwargs).new_page()
    page.goto(f"/conversations/{conversation.id}/")
    expect(page.locator("#composer-input")).to_be_enabled()
    page.wait_for_function("() => window.chatSocket && window.chatSocket.isOpen")
    return page


def _send(page, text: str) -> None:
    page.fill("#composer-input", text)
    page.press("#composer-input", "Enter")


def _stored_reply(conversation) -> Message:
    return (
        Message.objects.filter(conversation=conversation, role="assistant")
        .order_by("-sequence_number")
        .first()
    )


def _wait_stored(page, conversation, count: int = 1) -> Message:
    """Wait until `count` assistant messages are stored and shown in their final form."""
    final = page.locator("li.message.assistant[data-final='1']")
    expect(final).to_have_count(count, timeout=20_000)
    expect(page.locator("li.message.streaming")).to_have_count(0)
    return _stored_reply(conversation)


def test_send_streams_tokens_then_shows_the_stored_reply(new_context, alice, page_errors):
    conversation = services.create_conversation(user=alice, title="Streaming")
    page = _open(new_context, alice, conversation)
    watch(page, page_errors)
    _send(page, "Hello there, multi-line test")
    expect(page.locator("li.message.user")).to_have_count(1)
    stream = page.locator("li.message.streaming .stream-text")
    expect(stream).not_to_be_empty()
    expect(page.locator("#stop-button")).to_be_visible()
    expect(page.locator("#send-button")).to_be_hidden()  # until something is typed: then it queues
    reply = _wait_stored(page, conversation)
    expect(page.locator("#send-button")).to_be_visible()
    expect(page.locator("#stop-button")).to_be_hidden()
    shown = page.locator("li.message.assistant .content").inner_text()
    assert " ".join(shown.split()) == " ".join(reply.content.split())
    assert page_errors["errors"] == []


def test_shift_enter_adds_a_newline_instead_of_sending(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Keys")
    page = _open(new_context, alice, conversation)
    page.fill("#composer-input", "first line")
    page.press("#composer-input", "Shift+Enter")
    page.type("#composer-input", "second line")
    assert page.input_value("#composer-input") == "first line\nsecond line"
    assert page.locator("li.message").count() == 0


def test_stop_ends_the_reply_early(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Stop me")
    page = _open(new_context, alice, conversation)
    _send(page, LONG_PROMPT)
    expect(page.locator("li.message.streaming .stream-text")).not_to_be_empty()
    page.keyboard.press("Escape")
    reply = _wait_stored(page, conversation)
    assert reply.finish_reason == "stopped"
    expect(page.locator("li.message.assistant .finish-note")).to_have_text("Stopped.")
    assert LONG_PROMPT[-40:] not in reply.content


def test_reload_in_the_middle_of_a_reply_continues_it_once(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Reload")
    page = _open(new_context, alice, conversation)
    _send(page, LONG_PROMPT)
    expect(page.locator("li.message.streaming .stream-text")).not_to_be_empty()
    page.reload()
    # The reply in progress comes back through `sync`, then ends, exactly once.
    expect(page.locator("li.message.streaming .stream-text")).not_to_be_empty(timeout=5_000)
    reply = _wait_stored(page, conversation)
    assert reply.finish_reason == "end_turn"
    expect(page.locator("li.message.assistant")).to_have_count(1)
    shown = page.locator("li.message.assistant .content").inner_text()
    assert " ".join(shown.split()) == " ".join(reply.content.split())


def test_a_second_tab_shows_the_same_reply_live(new_context, alice):
    conversation = services.create_conversation(user=alice, title="Two tabs")
    first = _open(new_context, alice, conversation)
    second = _open(new_context, alice, conversation)
    _send(first, LONG_PROMPT)
    expect(second.locator("li.message.user")).to_have_count(1)
    expect(second.locator("li.message.streaming .stream-text")).not_to_be_empty()
    reply = _wait_stored(second, conversation)
    _wait_stored(first, conversation)
    for page in (first, second):
        shown = page.locator("li.message.assistant .content").inner_text()
        assert " ".join(shown.split()) == " ".join(reply.content.split())


def _two_turns(user, title="Fork source"):
    conversation = services.create_conversation(user=user, title=title)
    for role, text in [
        ("user", "첫 번째 질문입니다."),
        ("assistant", "첫 번째 답변입니다."),
        ("user", "두 번째 질문입니다."),
        ("assistant", "두 번째 답변입니다."),
    ]:
        seed.add_message(conversation_id=conversation.id, role=role, content=text)
    return conversation


def test_fork_from_a_message_lands_on_the_fork(new_context, alice):
    conversation = _two_turns(alice)
    page = _open(new_context, alice, conversation)
    second = page.locator("li.message").nth(1)
    second.hover()
    second.locator(".msg-menu > summary").click()
    second.get_by_role("menuitem", name="Fork from here").click()
    page.wait_for_url(lambda url: str(conversation.id) not in url)
    expect(page.locator("#parent-link")).to_have_text("Fork source")
    expect(page.locator("li.message")).to_have_count(2)
    expect(page.locator("#messages")).not_to_contain_text("두 번째")


def test_summarize_shows_the_summary(new_context, alice):
    conversation = _two_turns(alice, title="Summarize me")
    page = _open(new_context, alice, conversation)
    expect(page.locator("#summary-panel")).to_be_hidden()
    page.locator("#conv-menu > summary").click()
    page.get_by_role("menuitem", name="Summarize").click()
    expect(page.locator("#summary-panel")).to_be_visible(timeout=20_000)
    expect(page.locator("#summary-text")).not_to_be_empty()
    conversation.refresh_from_db()
    assert conversation.summary
    # The panel renders the summary's Markdown: headings and lists, not "## " and "- ".
    panel = page.locator("#summary-text")
    expect(panel.locator("h2")).to_have_count(3)
    expect(panel.locator("h2").first).to_have_text("주요 내용")
    expect(panel.locator("li").first).to_have_text("첫 번째 질문입니다.")
    assert "##" not in panel.inner_text()
    page.reload()  # and so does the page itself
    expect(page.locator("#summary-text h2").first).to_have_text("주요 내용")


def test_export_downloads_a_file_with_the_conversation(new_context, alice, tmp_path):
    conversation = _two_turns(alice, title="Export me")
    page = _open(new_context, alice, conversation)
    page.locator("#conv-menu > summary").click()
    page.get_by_role("menuitem", name="Export…").click()
    with page.expect_download() as info:
        page.get_by_role("link", name="Markdown (.md)").click()
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    text = path.read_text(encoding="utf-8")
    assert "Export me" in text
    assert "두 번째 질문입니다." in text and "첫 번째 답변입니다." in text


def test_search_finds_a_korean_word_inside_a_sentence_and_jumps_to_it(new_context, alice):
    conversation = services.create_conversation(user=alice, title="일정")
    for n in range(3):
        seed.add_message(conversation_id=conversation.id, role="user", content=f"잡담 {n}")
    target = seed.add_message(
        conversation_id=conversation.id, role="user", content="내일 회의가 오후 세 시에 있어요."
    )
    page = new_context(alice).new_page()
    page.goto("/")
    page.get_by_placeholder("Search", exact=True).fill("회의")  # the sidebar's search box
    page.keyboard.press("Enter")
    hit = page.locator(".hit").first
    expect(hit.locator("mark")).to_have_text("회의")
    expect(hit).to_contain_text("내일 회의가 오후 세 시에 있어요.")
    hit.click()
    page.wait_for_url(f"**/conversations/{conversation.id}/**")
    landed = page.locator(f"#msg-{target.id}")
    expect(landed).to_be_in_viewport()
    expect(landed).to_have_class("message user highlighted")


def test_new_conversation_in_another_tab_appears_in_the_list(new_context, alice):
    context = new_context(alice)
    listing = context.new_page()
    listing.goto("/conversations/")
    other = context.new_page()
    other.goto("/")
    other.fill("#composer-input", "Made elsewhere")
    other.press("#composer-input", "Enter")
    other.wait_for_url("**/conversations/*/")
    expect(listing.locator("#conversation-rows")).to_contain_text("Made elsewhere", timeout=15_000)
    expect(listing.locator("#sidebar")).to_contain_text("Made elsewhere")


def test_header_counts_follow_the_conversation_in_every_tab(
    new_context, alice, page_errors, tmp_path
):
    conversation = services.create_conversation(user=alice, title="Counting")
    first = _open(new_context, alice, conversation)
    second = _open(new_context, alice, conversation)
    for page in (first, second):
        watch(page, page_errors)
        expect(page.locator("#conv-stats")).to_have_text("0 messages · 0 tokens")
    _send(first, "Hello there")
    # Live while the reply streams: the question and the reply being written count at once,
    # in both tabs.
    expect(second.locator("li.message.streaming")).to_have_count(1)
    for page in (first, second):
        expect(page.locator("#conv-stats")).to_contain_text("2 messages ·")
    stored = _wait_stored(first, conversation)
    conversation.refresh_from_db()
    assert conversation.message_count == 2 and stored is not None
    # The question's count is an estimate, so the total is one.
    expected = f"2 messages · ≈ {conversation.total_tokens_used:,} tokens"
    for page in (first, second):  # no reload: the stored messages carried their counts
        expect(page.locator("#conv-stats")).to_have_text(expected)
    second.screenshot(path=str(tmp_path / "header-counts.png"))
    assert page_errors["errors"] == []
