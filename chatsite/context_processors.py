from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def chat(request: HttpRequest) -> dict[str, object]:
    """Tell every page whether the built-in offline model answers."""
    return {"offline_model": not settings.OPENAI_API_KEY, "chat_model": settings.CHAT_MODEL}
