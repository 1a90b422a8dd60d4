"""Pages that need no agent: sign-up, ownership, inert content, Korean, tokens, screenshots."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from conversations import services
from conversations.models import Message
from tests.support import seed

from .conftest import watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

XSS_PAYLOADS = [
    "<script>window.__xss = 1</script>",
    '<img src="x" onerror="window.__xss = 2">',
    "[click me](javascript:window.__xss=3)",
    '<a href="javascript:window.__xss=4">raw link</a>',
    "```html\n<script>window.__xss = 5</script>\n```",
]


def test_sign_up_lands_on_a_new_chat(new_context, django_user_model):
    page = new_context().new_page()
    page.goto("/accounts/signup/")
    page.fill("#id_username", "carol")
    page.fill("#id_password1", "a-long-pass-phrase-9")
    page.fill("#id_password2", "a-long-pass-phrase-9")
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_text("What can I help with?")).to_be_visible()
    expect(page.locator("#composer-input")).to_be_focused()
    assert django_user_model.objects.filter(username="carol").exists()


def test_other_users_conversation_url_shows_404(new_context, alice, bob):
    secret = services.create_conversation(user=alice, title="Alice's secret plans")
    page = new_context(bob).new_page()
    response = page.goto(f"/conversations/{secret.id}/")
    assert response.status == 404
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    assert "secret plans" not in page.content()


def test_xss_payloads_in_messages_stay_inert(new_context, alice, page_errors):
    conversation = services.create_conversation(user=alice, title="<b>bold title</b>")
    for n, payload in enumerate(XSS_PAYLOADS):
        role = Message.Role.USER if n % 2 == 0 else Message.Role.ASSISTANT
        seed.add_message(conversation_id=conversation.id, role=role, content=payload)
    page = new_context(alice).new_page()
    watch(page, page_errors)
    page.goto(f"/conversations/{conversation.id}/")
    expect(page.locator("li.message")).to_have_count(len(XSS_PAYLOADS))
    for link in page.locator(".message a").all():
        assert not (link.get_attribute("href") or "").lower().startswith("javascript:")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__xss") is None
    assert page.locator(".message img, .message script").count() == 0
    assert page_errors["dialogs"] == []
    # The payloads are shown as text.
    expect(page.locator("#messages")).to_contain_text("<script>window.__xss = 1</script>")
    expect(page.get_by_role("heading", name="<b>bold title</b>")).to_be_visible()


def test_page_in_korean_shows_korean_labels(new_context, alice):
    page = new_context(alice, locale="ko-KR").new_page()
    page.goto("/conversations/")
    assert page.get_attribute("html", "lang") == "ko"
    expect(page.get_by_role("heading", name="모든 대화")).to_be_visible()
    expect(page.get_by_role("link", name="새 채팅").first).to_be_visible()
    expect(page.get_by_placeholder("제목과 메시지 검색")).to_be_visible()
    page.goto("/")
    expect(page.get_by_text("무엇을 도와드릴까요?")).to_be_visible()
    expect(page.get_by_placeholder("어시스턴트에게 메시지 보내기")).to_be_visible()


def test_language_switcher_changes_the_language(new_context, alice):
    page = new_context(alice).new_page()
    page.goto("/conversations/")
    page.locator("#account-menu summary").click()
    page.get_by_label("Language").select_option("ko")
    expect(page.get_by_role("heading", name="모든 대화")).to_be_visible()


def test_tokens_page_shows_a_new_secret_once(new_context, alice):
    page = new_context(alice).new_page()
    page.goto("/settings/tokens/")
    page.get_by_label("Name", exact=True).fill("laptop script")
    page.get_by_role("button", name="Create token").click()
    secret = page.locator("#new-token").inner_text()
    assert re.fullmatch(r"cht_[0-9a-f]{8}_\S+", secret)
    expect(page.get_by_role("cell", name="laptop script")).to_be_visible()
    page.goto("/settings/tokens/")  # a later visit never shows it again
    assert page.locator("#new-token").count() == 0
    expect(page.get_by_role("cell", name="laptop script")).to_be_visible()


def test_documents_page_offers_an_upload(new_context, alice):
    page = new_context(alice).new_page()
    page.goto("/documents/")
    expect(page.get_by_role("heading", name="Documents", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Upload")).to_be_visible()


def _demo_conversation(user):
    conversation = services.create_conversation(user=user, title="Weekly meeting prep")
    turns = [
        ("user", "Can you draft an agenda for Monday's meeting?"),
        (
            "assistant",
            "Here is a draft agenda:\n\n1. **Status** of the budget\n2. Hiring plan\n"
            "3. Next steps\n\n```python\nagenda = ['status', 'hiring', 'next']\n"
            "print(len(agenda))\n```",
        ),
        ("user", "내일 회의가 몇 시에 있는지도 알려줘."),
        ("assistant", "내일 회의는 **오후 3시**에 있습니다. 회의실 B에서 열립니다."),
    ]
    for role, content in turns:
        seed.add_message(
            conversation_id=conversation.id,
            role=role,
            content=content,
            model="offline" if role == "assistant" else "",
            tokens_used=42 if role == "assistant" else 0,
            parts=[{"type": "thinking", "step": "route", "content": "agent"}]
            if role == "assistant"
            else None,
            metadata={
                "context": {
                    "summaries": [],
                    "message_ids": [],
                    "estimated_input_tokens": 120,
                    "actual_input_tokens": 118,
                    "window": 128000,
                }
            }
            if role == "assistant"
            else None,
        )
    return conversation
