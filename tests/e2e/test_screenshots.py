"""Retake the README's screenshots: each view at desktop and phone size, light and dark,
English and Korean (docs/screenshots/<view>-<size>-<scheme>-<language>.png).

Each shot is also a check: the view it shows is there, and the page logged no error."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from conversations import services, shares
from conversations.models import Conversation, Project
from memories import services as memories
from prompts.models import Prompt
from tests.support import seed

from .conftest import SCREENSHOTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"desktop": {"width": 1400, "height": 900}, "phone": {"width": 390, "height": 844}}
LANGUAGES = {"en": "en-US", "ko": "ko-KR"}

TEXT = {
    "en": {
        "title": "Weekly meeting prep",
        "ask": "Can you draft an agenda for Monday's meeting? "
        "We need the budget, hiring and the launch date.",
        "reply": (
            "Here is a draft agenda for **Monday**:\n\n1. Budget status — the Q3 spend is at "
            "$\\frac{3}{4}$ of plan\n2. Hiring: two engineers\n3. Launch date\n\n```python\n"
            "agenda = ['budget', 'hiring', 'launch']\nprint(len(agenda))\n```"
        ),
        "ask2": "Which room is it in?",
        "reply2": "It is in **room B** on the third floor, from 3 p.m. to 4 p.m.",
        "summary": "## Main points\n- An agenda for Monday's meeting\n\n## Decisions\n"
        "- Room B, 3 p.m.\n\n## Next actions\n- Send the agenda",
        "others": ["Trip to Lisbon", "Python question", "Birthday ideas"],
        "project": "Work",
        "memory": "I lead the platform team",
        "long": "Tell me a long story about a lighthouse keeper and the sea, in detail please",
    },
    "ko": {
        "title": "주간 회의 준비",
        "ask": "월요일 회의 안건 초안을 써 줄래? 예산, 채용, 출시일을 다뤄야 해.",
        "reply": (
            "**월요일** 회의 안건 초안입니다.\n\n1. 예산 현황 — 3분기 지출은 계획의 "
            "$\\frac{3}{4}$\n2. 채용: 엔지니어 두 명\n3. 출시일\n\n```python\n"
            "agenda = ['예산', '채용', '출시']\nprint(len(agenda))\n```"
        ),
        "ask2": "회의실은 어디야?",
        "reply2": "3층 **회의실 B**에서 오후 3시부터 4시까지 열립니다.",
        "summary": "## 주요 내용\n- 월요일 회의 안건\n\n## 결정 사항\n- 회의실 B, 오후 3시\n\n"
        "## 다음 할 일\n- 안건 보내기",
        "others": ["리스본 여행", "파이썬 질문", "생일 선물 아이디어"],
        "project": "업무",
        "memory": "나는 플랫폼 팀을 이끌고 있다",
        "long": "등대지기와 바다에 관한 긴 이야기를 자세히 들려줘",
    },
}


def _seed(user, lang: str) -> Conversation:
    """A user's conversations as the screenshots show them; return the main one."""
    text = TEXT[lang]
    project = Project.objects.create(owner=user, name=text["project"])
    for n, title in enumerate(text["others"]):
        other = services.create_conversation(
            user=user, title=title, project=project if n == 0 else None
        )
        seed.add_message(conversation_id=other.id, role="user", content=title)
    conversation = services.create_conversation(user=user, title=text["title"])
    memory = memories.add_memory(user_id=user.pk, text=text["memory"])
    for role, content in (
        ("user", text["ask"]),
        ("assistant", text["reply"]),
        ("user", text["ask2"]),
    ):
        seed.add_message(conversation_id=conversation.id, role=role, content=content)
    ids = [str(m) for m in conversation.messages.values_list("id", flat=True)]
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content=text["reply2"],
        model="offline",
        tokens_used=38,
        parts=[
            {
                "type": "thinking",
                "step": "route",
                "code": "route.documents",
                "params": {},
                "content": "Decided to search your documents",
            },
            {
                "type": "thinking",
                "step": "retrieve",
                "code": "retrieve.found",
                "params": {"count": 1},
                "content": "Searched your documents: 1 passage found",
            },
            {
                "type": "references",
                "items": [
                    {
                        "document_title": "Office guide",
                        "section": "Meeting rooms",
                        "snippet": "Room B is on the third floor.",
                    }
                ],
            },
        ],
        metadata={
            "context": {
                "summaries": [],
                "message_ids": ids,
                "estimated_input_tokens": 412,
                "actual_input_tokens": 398,
                "window": 128000,
                "memories": [{"id": memory["id"], "text": text["memory"]}],
            }
        },
    )
    Conversation.objects.filter(pk=conversation.pk).update(
        summary=text["summary"], summary_at=timezone.now()
    )
    return conversation


def _shot(page, name: str) -> None:
    page.wait_for_timeout(250)  # fonts and the rich renderer settle
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_screenshots(new_context, make_user, lang):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    user = make_user(f"shots-{lang}")
    conversation = _seed(user, lang)
    link = shares.create_share(user=user, conversation_id=conversation.id)
    for size, viewport in SIZES.items():
        for scheme in ("light", "dark"):
            suffix = f"{size}-{scheme}-{lang}"
            errors: list[str] = []
            page = new_context(
                user, viewport=viewport, color_scheme=scheme, locale=LANGUAGES[lang]
            ).new_page()
            page.on(
                "console",
                lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None,
            )
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))

            page.goto("/")
            expect(page.locator("#composer-input")).to_be_focused()
            _shot(page, f"landing-{suffix}")

            page.goto(f"/conversations/{conversation.id}/")
            page.wait_for_function("() => window.chatSocket && window.chatSocket.isOpen")
            expect(page.locator("#summary-panel")).to_be_visible()
            page.locator("#scroller").evaluate("(s) => { s.scrollTop = 0; }")
            _shot(page, f"summary-{suffix}")

            reply = page.locator("li.message.assistant").last
            reply.locator("details.details > summary").click()
            expect(reply.locator(".details-body")).to_be_visible()
            reply.scroll_into_view_if_needed()
            _shot(page, f"details-{suffix}")

            page.locator("#conv-menu > summary").click()
            expect(page.locator("#conv-menu .menu-items")).to_be_visible()
            _shot(page, f"menu-{suffix}")
            page.keyboard.press("Escape")

            page.locator("#conv-menu > summary").click()
            page.locator("#share-button").click()
            expect(page.locator("#share-list .share-url")).to_contain_text(link.token)
            _shot(page, f"share-{suffix}")
            page.keyboard.press("Escape")

            # Mid-stream, in a conversation of its own (the main one stays as seeded).
            story = services.create_conversation(user=user, title=TEXT[lang]["long"][:40])
            page.goto(f"/conversations/{story.id}/")
            page.wait_for_function("() => window.chatSocket && window.chatSocket.isOpen")
            page.fill("#composer-input", TEXT[lang]["long"])
            page.press("#composer-input", "Enter")
            expect(page.locator("li.message.streaming .stream-text")).not_to_be_empty(
                timeout=10_000
            )
            page.wait_for_timeout(800)
            _shot(page, f"streaming-{suffix}")
            expect(page.locator("li.message.streaming")).to_have_count(0, timeout=30_000)
            page.goto("/settings/")  # off its page first: a deleted conversation's page goes home
            token = page.evaluate("document.querySelector('meta[name=csrf-token]').content")
            gone = page.request.delete(
                f"/api/v1/conversations/{story.id}", headers={"X-CSRFToken": token}
            )
            assert gone.status == 204

            page.goto("/conversations/")
            expect(page.locator(".row-item").first).to_be_visible()
            _shot(page, f"all-conversations-{suffix}")

            page.goto("/settings/")
            _shot(page, f"settings-{suffix}")

            page.goto("/settings/memory/")
            expect(page.locator("li.memory")).to_have_count(1)
            _shot(page, f"memory-{suffix}")
            page.close()
            assert errors == [], (suffix, errors)
    _peer_shots(new_context, user, lang)


PAGE = {
    "en": "<h1>Trip budget</h1><p>Train 120,000 · Hotel 200,000</p><button>Recalculate</button>",
    "ko": "<h1>여행 예산</h1><p>기차 120,000원 · 호텔 200,000원</p><button>다시 계산</button>",
}


def _peer_shots(new_context, user, lang: str) -> None:
    """An artifact previewed beside the chat, and the prompt library behind "/"."""
    asks = {"en": "Make a budget page", "ko": "예산 페이지를 만들어 줘"}
    page_conversation = services.create_conversation(user=user, title=asks[lang])
    seed.add_message(conversation_id=page_conversation.id, role="user", content=asks[lang])
    seed.add_message(
        conversation_id=page_conversation.id,
        role="assistant",
        content=f"```html\n{PAGE[lang]}\n```",
        model="offline",
        tokens_used=40,
    )
    Prompt.objects.create(
        owner=user, command="translate", title="번역 · Translate", content="{{text}}"
    )
    Prompt.objects.create(owner=user, command="weekly", title=TEXT[lang]["title"], content="…")
    for size, viewport in SIZES.items():
        for scheme in ("light", "dark"):
            suffix = f"{size}-{scheme}-{lang}"
            page = new_context(
                user, viewport=viewport, color_scheme=scheme, locale=LANGUAGES[lang]
            ).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            page.goto(f"/conversations/{page_conversation.id}/")
            page.locator(".preview-code").first.click()
            expect(page.frame_locator("#artifact-panel iframe").locator("h1")).to_be_visible()
            _shot(page, f"artifact-{suffix}")
            page.keyboard.press("Escape")
            page.locator("#composer-input").press("/")
            expect(page.locator("#prompt-menu li[role=option]")).to_have_count(2)
            _shot(page, f"prompts-{suffix}")
            page.close()
            assert errors == [], (suffix, errors)
