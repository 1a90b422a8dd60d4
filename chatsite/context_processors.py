from __future__ import annotations

from functools import cached_property

from django.conf import settings
from django.http import HttpRequest


class Shell:
    """What the app shell shows around every page, computed only if the page uses it."""

    def __init__(self, request: HttpRequest) -> None:
        self.request = request

    @cached_property
    def sidebar(self):
        from conversations.sidebar import build_sidebar

        user = self.request.user
        return build_sidebar(user=user) if user.is_authenticated else None

    @cached_property
    def theme(self) -> str:
        """The person's theme: "light", "dark", or "" (as the device prefers)."""
        from accounts.preferences import theme_of

        user = self.request.user
        return theme_of(user) if user.is_authenticated else ""

    @property
    def signup_open(self) -> bool:
        """Sign-up is off when only single sign-on may sign in (OIDC_ONLY)."""
        from sso.config import sso_only

        return not sso_only()


def chat(request: HttpRequest) -> dict[str, object]:
    """Tell every page whether the built-in offline model answers, and give it the shell."""
    return {
        "offline_model": not settings.OPENAI_API_KEY,
        "chat_model": settings.CHAT_MODEL,
        "dictation": bool(settings.CHAT_STT_MODEL),
        "dictation_max_seconds": settings.CHAT_STT_MAX_SECONDS,
        "server_reads_aloud": bool(settings.CHAT_TTS_MODEL),
        "shell": Shell(request),
    }
