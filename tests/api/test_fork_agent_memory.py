"""Fork semantics against the REAL agent memory (no fakes).

Needs conversations.replies.threads wired to agent.checkpoint (acopy_agent_thread and
arun_agent_turn); until then these fail with NotImplementedError, on purpose.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections
from django.test import AsyncClient

from accounts.tokens import create_api_token
from conversations import services

pytestmark = pytest.mark.django_db(transaction=True)

FACTS = ["My cat is called Nabi.", "My car is bright red.", "I live in Busan."]


async def _thread_texts(conversation_id: str) -> str:
    from agent.checkpoint import get_checkpointer
    from agent.threads import read_thread

    saver = await get_checkpointer(settings.CHECKPOINT_URL)
    memory = await read_thread(saver, conversation_id)
    if memory is None:
        return ""
    return "\n".join([*memory["summaries"], *(m["content"] for m in memory["messages"])])


async def test_forks_agent_does_not_know_what_was_said_after_the_fork_point(alice):
    token = (await sync_to_async(create_api_token)(user=alice, name="t")).secret
    auth = {"Authorization": f"Bearer {token}"}
    client = AsyncClient()
    try:
        conversation = await sync_to_async(services.create_conversation)(user=alice, title="F")
        url = f"/api/v1/conversations/{conversation.id}"
        for fact in FACTS:  # 3 turns: messages 1..6
            response = await client.post(
                f"{url}/messages", {"content": fact}, content_type="application/json", headers=auth
            )
            assert response.status_code == 201, response.content
        messages = (await client.get(f"{url}/messages", headers=auth)).json()["items"]
        assert [m["sequence_number"] for m in messages] == [1, 2, 3, 4, 5, 6]
        third = messages[2]
        fork = await client.post(
            f"{url}/fork",
            {"from_message_id": third["id"]},
            content_type="application/json",
            headers=auth,
        )
        assert fork.status_code == 201, fork.content
        fork_id = fork.json()["id"]
        assert fork.json()["message_count"] == 3
        parent = (await client.get(url, headers=auth)).json()
        assert [f["id"] for f in parent["forks"]] == [fork_id]
        remembered = await _thread_texts(fork_id)
        assert "Nabi" in remembered and "bright red" in remembered
        assert "Busan" not in remembered  # message 5 came after the fork point
        assert "Busan" in await _thread_texts(str(conversation.id))
    finally:
        await sync_to_async(connections.close_all)()
