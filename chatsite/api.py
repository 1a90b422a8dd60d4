"""SPEC's JSON API under /api/v1/ (django-ninja; OpenAPI at /api/v1/openapi.json)."""

from __future__ import annotations

from typing import Any

from django.urls import URLPattern, URLResolver

from accounts.tokens import BearerAuth
from conversations.api import conversations, messages, projects
from core.api import SessionAuth, build_api
from knowledge import api as knowledge_api

api = build_api(auth=[BearerAuth(), SessionAuth()])
api.add_router("", conversations.router)
api.add_router("", messages.router)
api.add_router("", projects.router)
api.add_router("", knowledge_api.router)


def _login_not_required(patterns: list[Any]) -> list[Any]:
    # LoginRequiredMiddleware would redirect to the login page; the API answers 401 JSON.
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            _login_not_required(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            pattern.callback.login_required = False
    return patterns


def get_urls() -> tuple[list[Any], str, str]:
    """Return the API's URL patterns (for `include`), open to LoginRequiredMiddleware."""
    patterns, app_name, namespace = api.urls
    return _login_not_required(patterns), app_name, namespace
