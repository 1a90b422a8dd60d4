"""Create a demo user with a few sample conversations in the site's language.

The samples are written by hand, not by a model: their replies name no model, carry
`metadata.sample`, and each conversation's description says they are examples.
"""

from __future__ import annotations

import json
import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from conversations import services
from conversations.models import Project
from core import rls
from text.language import detect_language
from transfers.export_format import EXPORT_FORMAT, EXPORT_VERSION
from transfers.imports import import_conversation

DEMO_PASSWORD_DEFAULT = "demo-chat-2026"
SAMPLE_NOTE = {
    "ko": "예시 대화입니다. 답변은 모델이 쓴 것이 아니라 미리 써 둔 예시입니다.",
    "en": "A sample conversation: the replies are written-in examples, not from a model.",
}

Sample = tuple[str, str | None, list[tuple[str, str]]]  # title, project, messages

# The samples in the site's language (LANGUAGE_CODE, or --language): a person reading
# English is not greeted by Korean conversations, nor the reverse.
DEMO_CONVERSATIONS: dict[str, list[Sample]] = {
    "ko": [
        (
            "주간 회의 준비",
            "업무",
            [
                ("user", "다음 주 회의가 화요일 오전 10시로 잡혔어. 안건은 출시 일정이야."),
                (
                    "assistant",
                    "알겠습니다. 화요일 오전 10시 회의의 안건은 출시 일정이네요. "
                    "준비할 자료 목록을 만들어 드릴까요?",
                ),
                ("user", "응, 그리고 디자인 팀도 초대해야 해."),
                ("assistant", "디자인 팀 초대를 할 일 목록에 추가했습니다."),
            ],
        ),
        (
            "리스본 여행",
            "개인",
            [
                ("user", "3월 3일에 리스본으로 가서 5박 할 거야."),
                ("assistant", "리스본, 3월 3일부터 5박이네요. 날짜별 일정을 짜 드릴까요?"),
                ("user", "응, 그리고 나는 해산물을 안 먹어."),
                ("assistant", "알겠습니다. 해산물 식당은 일정에서 빼겠습니다."),
            ],
        ),
        (
            "Python 질문",
            None,
            [
                ("user", "파이썬에서 리스트를 뒤집는 방법은?"),
                (
                    "assistant",
                    "`items[::-1]`로 새 리스트를 만들거나 `items.reverse()`로 제자리에서 "
                    "뒤집습니다.",
                ),
            ],
        ),
    ],
    "en": [
        (
            "Weekly meeting prep",
            "Work",
            [
                ("user", "Next week's meeting is on Tuesday at 10 a.m. The topic is the launch."),
                (
                    "assistant",
                    "Got it: Tuesday at 10 a.m., about the launch date. Shall I list what "
                    "to prepare?",
                ),
                ("user", "Yes, and the design team should be invited too."),
                ("assistant", "I added inviting the design team to the to-do list."),
            ],
        ),
        (
            "Trip to Lisbon",
            "Personal",
            [
                ("user", "I'm flying to Lisbon on March 3rd and staying five nights."),
                ("assistant", "Noted: Lisbon, March 3rd, five nights. Want a day-by-day plan?"),
                ("user", "Yes, and I don't eat seafood."),
                ("assistant", "Got it — I'll leave seafood restaurants out of the plan."),
            ],
        ),
        (
            "Python question",
            None,
            [
                ("user", "How do I reverse a list in Python?"),
                (
                    "assistant",
                    "`items[::-1]` makes a new reversed list; `items.reverse()` reverses it "
                    "in place.",
                ),
            ],
        ),
    ],
}


class Command(BaseCommand):
    help = "Create the demo user and sample conversations (with --if-no-users: only on a new site)."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--if-no-users", action="store_true", help="do nothing when any user exists"
        )
        parser.add_argument(
            "--language",
            choices=sorted(DEMO_CONVERSATIONS),
            help="the samples' language (default: LANGUAGE_CODE's, else English)",
        )

    def handle(self, *args, if_no_users: bool = False, **options) -> None:
        User = get_user_model()
        if if_no_users and User.objects.exists():
            return
        password = os.environ.get("DEMO_PASSWORD", DEMO_PASSWORD_DEFAULT)
        with transaction.atomic():
            user, created = User.objects.get_or_create(username=settings.DEMO_USERNAME)
            user.set_password(password)
            user.save()
            if created:
                language = options.get("language") or settings.LANGUAGE_CODE.split("-")[0]
                with rls.as_user(user.pk):
                    self._create_conversations(
                        user, DEMO_CONVERSATIONS.get(language, []) or DEMO_CONVERSATIONS["en"]
                    )
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo login: username '{settings.DEMO_USERNAME}', password '{password}' at "
                f"http://{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
                "/accounts/login/"
            )
        )

    def _create_conversations(self, user, samples: list[Sample]) -> None:
        # Sample history is brought in the way users bring theirs: as an import, so the
        # one writer of new user messages (the reply orchestrator) stays the only one.
        for title, project_name, messages in samples:
            language = detect_language([title, *(text for _role, text in messages)])
            export = {
                "format": EXPORT_FORMAT,
                "version": EXPORT_VERSION,
                "conversation": {"title": title, "description": SAMPLE_NOTE[language]},
                "messages": [
                    {
                        "role": role,
                        "content": content,
                        "sequence_number": n,
                        "model": "",  # no model wrote them
                        # No count: the import estimates each one and marks it estimated.
                        "finish_reason": None if role == "user" else "end_turn",
                        "metadata": {"sample": True},
                    }
                    for n, (role, content) in enumerate(messages, start=1)
                ],
            }
            conversation = import_conversation(user=user, raw=json.dumps(export))
            if project_name:
                project, _ = Project.objects.get_or_create(owner=user, name=project_name)
                services.update_conversation(conversation=conversation, project=project)
