"""Sensitive information in a user message: refused with where it is, stored only when the
sender confirms (SENSITIVE_CHECK=warn), never with `block`, always with `off`."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import AsyncClient

from accounts.tokens import create_api_token
from conversations.models import Message
from conversations.replies import turns
from tests.support.fake_turn import FakeAgent

from .conftest import make_conversation

pytestmark = pytest.mark.django_db(transaction=True)
CARD = "4111 1111 1111 1111"
TEXT = f"내 카드 {CARD} 로 결제해 줘"


@pytest.fixture
def echo_agent(monkeypatch):
    agent = FakeAgent(reply=lambda text: ["echo: ", text], delay=0)
    monkeypatch.setattr(turns, "astart_turn", agent)
    return agent


@pytest.fixture
async def client_for(alice):
    conversation = await sync_to_async(make_conversation)(alice)
    token = (await sync_to_async(create_api_token)(user=alice, name="t")).secret
    client = AsyncClient()
    url = f"/api/v1/conversations/{conversation.id}/messages"

    async def post(body):
        return await client.post(
            url, body, content_type="application/json", headers={"Authorization": f"Bearer {token}"}
        )

    yield post, conversation
    await sync_to_async(connections.close_all)()


async def test_warn_refuses_with_findings_then_stores_when_confirmed(client_for, echo_agent):
    post, conversation = client_for
    refused = await post({"content": TEXT})
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "sensitive" and error["can_confirm"] is True
    (finding,) = error["findings"]
    assert finding["kind"] == "card" and TEXT[finding["start"] : finding["end"]] == CARD
    assert not await Message.objects.filter(conversation=conversation).aexists()
    assert echo_agent.calls == []  # the model never saw it

    stored = await post({"content": TEXT, "confirm_sensitive": True})
    assert stored.status_code == 201, stored.content
    assert stored.json()["user_message"]["metadata"]["sensitive"] == ["card"]

    masked = await post({"content": "내 카드 [card] 로 결제해 줘"})
    assert masked.status_code == 201
    assert "sensitive" not in masked.json()["user_message"]["metadata"]


async def test_block_refuses_even_when_confirmed(client_for, echo_agent, settings):
    settings.SENSITIVE_CHECK = "block"
    post, conversation = client_for
    refused = await post({"content": TEXT, "confirm_sensitive": True})
    assert refused.status_code == 409
    assert refused.json()["error"]["can_confirm"] is False
    assert not await Message.objects.filter(conversation=conversation).aexists()


async def test_off_stores_it_without_a_word(client_for, echo_agent, settings):
    settings.SENSITIVE_CHECK = "off"
    post, _ = client_for
    stored = await post({"content": TEXT})
    assert stored.status_code == 201
    assert "sensitive" not in stored.json()["user_message"]["metadata"]


async def test_confirm_must_be_a_boolean(client_for, echo_agent):
    post, _ = client_for
    response = await post({"content": TEXT, "confirm_sensitive": "yes"})
    assert response.status_code == 422
