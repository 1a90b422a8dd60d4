"""SPEC's JSON API under /api/v1/ (django-ninja; OpenAPI at /api/v1/openapi.json)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, JsonResponse
from django.urls import URLPattern, URLResolver
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt

from accounts import api as accounts_api
from accounts.tokens import BearerAuth
from conversations.api import attachments, conversations, messages, model_list, projects, shares
from core.api import SessionAuth, build_api, error_response
from knowledge import api as knowledge_api
from memories import api as memories_api
from presets import api as presets_api
from prompts import api as prompts_api
from transfers import api as transfers_api
from usage import api as usage_api
from voice import api as voice_api

api = build_api(auth=[BearerAuth(), SessionAuth()])
# Before conversations': its fixed paths (/conversations/import, /bulk) come ahead of
# /conversations/{conversation_id}.
for module in (
    transfers_api,
    conversations,
    messages,
    projects,
    shares,
    attachments,
    knowledge_api,
    model_list,
    accounts_api,
    memories_api,
    presets_api,
    prompts_api,
    usage_api,
    voice_api,
):
    api.add_router("", module.router)


def _login_not_required(patterns: list[Any]) -> list[Any]:
    # LoginRequiredMiddleware would redirect to the login page; the API answers 401 JSON.
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            _login_not_required(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            pattern.callback.login_required = False
    return patterns


@csrf_exempt  # any method: it only answers 404, and must answer it in JSON
@login_not_required
def not_found(request: HttpRequest, rest: str = "") -> JsonResponse:
    """Answer any path under /api/v1/ that names no operation: JSON, like every API error."""
    return error_response(404, "not_found", _("No such API operation."))


def get_urls() -> tuple[list[Any], str, str]:
    """Return the API's URL patterns (for `include`), open to LoginRequiredMiddleware."""
    patterns, app_name, namespace = api.urls
    return _login_not_required(patterns), app_name, namespace
