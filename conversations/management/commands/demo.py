"""Create a demo user with a few Korean and English sample conversations.

The samples are written by hand, not by a model: their replies name no model, carry
`metadata.sample`, and each conversation's description says they are examples.
"""

from __future__ import annotations

import json
import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from conversations import services
from conversations.export_format import EXPORT_FORMAT, EXPORT_VERSION
from conversations.imports import import_conversation
from conversations.models import Project
from core import rls
from text.language import detect_language

DEMO_USERNAME = "demo"
DEMO_PASSWORD_DEFAULT = "demo-chat-2026"
SAMPLE_NOTE = {
    "ko": "예시 대화입니다. 답변은 모델이 쓴 것이 아니라 미리 써 둔 예시입니다.",
    "en": "A sample conversation: the replies are written-in examples, not from a model.",
}

DEMO_CONVERSATIONS: list[tuple[str, str | None, list[tuple[str, str]]]] = [
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
        "Python 질문",
        None,
        [
            ("user", "파이썬에서 리스트를 뒤집는 방법은?"),
            (
                "assistant",
                "`items[::-1]`로 새 리스트를 만들거나 `items.reverse()`로 제자리에서 뒤집습니다.",
            ),
        ],
    ),
]


class Command(BaseCommand):
    help = "Create the demo user and sample conversations (with --if-no-users: only on a new site)."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--if-no-users", action="store_true", help="do nothing when any user exists"
        )

    def handle(self, *args, if_no_users: bool = False, **options) -> None:
        User = get_user_model()
        if if_no_users and User.objects.exists():
            return
        password = os.environ.get("DEMO_PASSWORD", DEMO_PASSWORD_DEFAULT)
        with transaction.atomic():
            user, created = User.objects.get_or_create(username=DEMO_USERNAME)
            user.set_password(password)
            user.save()
            if created:
                with rls.as_user(user.pk):
                    self._create_conversations(user)
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo login: username '{DEMO_USERNAME}', password '{password}' at "
                f"http://{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
                "/accounts/login/"
            )
        )

    def _create_conversations(self, user) -> None:
        # Sample history is brought in the way users bring theirs: as an import, so the
        # one writer of new user messages (the reply orchestrator) stays the only one.
        for title, project_name, messages in DEMO_CONVERSATIONS:
            language = detect_language([title])
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
