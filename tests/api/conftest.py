"""Fixtures for the JSON API: clients that speak only SPEC, and a stand-in for the agent."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from accounts.tokens import create_api_token
from conversations import services
from conversations.models import Conversation, Message
from conversations.replies import summaries, threads
from tests.support import seed

API = "/api/v1"


class ApiClient:
    """A client that uses the API as a script would: JSON in, JSON out, a Bearer token."""

    def __init__(self, client: Client, token: str | None = None) -> None:
        self.client = client
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def _call(self, method: str, path: str, body: Any = None, **params: Any):
        kwargs: dict[str, Any] = {"headers": self.headers}
        if body is not None:
            kwargs |= {"data": json.dumps(body), "content_type": "application/json"}
        elif params:
            kwargs["data"] = params
        return getattr(self.client, method)(API + path, **kwargs)

    def get(self, path: str, **params: Any):
        return self._call("get", path, **params)

    def post(self, path: str, body: Any = None):
        return self._call("post", path, {} if body is None else body)

    def patch(self, path: str, body: Any):
        return self._call("patch", path, body)

    def delete(self, path: str):
        return self._call("delete", path)

    def post_raw(self, path: str, raw: bytes | str, content_type: str = "application/json"):
        return self.client.post(
            API + path, data=raw, content_type=content_type, headers=self.headers
        )


@pytest.fixture
def api(alice) -> ApiClient:
    """Alice's API client (Bearer token)."""
    return ApiClient(Client(), create_api_token(user=alice, name="tests").secret)


@pytest.fixture
def bob_api(bob) -> ApiClient:
    """Bob's API client (Bearer token)."""
    return ApiClient(Client(), create_api_token(user=bob, name="tests").secret)


@pytest.fixture
def fake_agent(monkeypatch) -> dict[str, list[Any]]:
    """Stand in for the agent's memory operations; record what was asked of them."""
    calls: dict[str, list[Any]] = {"copy": [], "summarize": [], "delete": [], "previous": []}

    async def copy(*, source_id, target_id, up_to):
        calls["copy"].append((str(source_id), str(target_id), str(up_to.pk)))

    async def summarize(*, messages, max_words=None, previous="", **_):
        calls["summarize"].append(([m.content for m in messages], max_words))
        calls["previous"].append(previous)  # the summary it continues ("": written anew)
        return f"Main points: plans up to {messages[-1].content}.\nNext actions: write tests."

    def delete(conversation_id):
        calls["delete"].append(str(conversation_id))

    monkeypatch.setattr(threads, "acopy_agent_thread", copy)
    monkeypatch.setattr(summaries, "asummarize_for_conversation", summarize)
    monkeypatch.setattr(threads, "delete_agent_thread", delete)
    return calls


def make_conversation(
    user: Any, *, title: str = "Plans", contents: list[str] | None = None, **fields: Any
) -> Conversation:
    """Create a conversation with alternating user/assistant messages, one minute apart."""
    conversation = services.create_conversation(user=user, title=title, **fields)
    start = timezone.now() - timedelta(hours=1)
    for i, content in enumerate(contents or []):
        seed.add_message(
            conversation_id=conversation.id,
            role=Message.Role.USER if i % 2 == 0 else Message.Role.ASSISTANT,
            content=content,
            created_by=user if i % 2 == 0 else None,
            tokens_used=0 if i % 2 == 0 else 10 + i,
            model="" if i % 2 == 0 else "offline",
            finish_reason="" if i % 2 == 0 else "end_turn",
            parts=[] if i % 2 == 0 else [{"type": "thinking", "content": f"step {i}"}],
            metadata={} if i % 2 == 0 else {"context": {"message_ids": [], "n": i}},
            created_at=start + timedelta(minutes=i),
        )
    conversation.refresh_from_db()
    return conversation
