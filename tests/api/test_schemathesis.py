"""Property-based: no request the OpenAPI schema allows (or nearly allows) gets a 5xx."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from accounts.tokens import create_api_token
from conversations import agent_service

from .conftest import make_conversation

pytestmark = pytest.mark.django_db

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())


@pytest.fixture
def token(alice, monkeypatch):
    # The WSGI handler closes connections after each request; the test's transaction
    # must survive (Django's test client disconnects the same receivers).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)

    async def nothing(**kwargs):
        return "summary"

    for name in ("acopy_agent_thread", "aremove_agent_message", "asummarize_for_conversation"):
        monkeypatch.setattr(agent_service, name, nothing)
    make_conversation(alice, title="Seed 회의", contents=["hello 회의가", "world"])
    yield create_api_token(user=alice, name="fuzz").secret
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_api_never_answers_5xx(case, token):
    if case.method == "POST" and case.path.endswith("/messages"):
        pytest.skip("runs the agent; covered by test_messages")
    response = case.call(headers={"Authorization": f"Bearer {token}"})
    assert response.status_code < 500, (case.method, case.path, response.text[:500])
