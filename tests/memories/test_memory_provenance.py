"""Where a memory came from: the message it was saved from (a link to it), when, and
whether the user said it or the assistant inferred it; the memory page filters by that."""

from __future__ import annotations

import re
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from conversations import services
from conversations.models import Message
from memories import services as memories
from tests.agent.helpers import memory_responder
from tests.conversations.conftest import model  # noqa: F401  (the fixture)
from tests.support.openai_replies import Reply, ToolCall, forced_tool
from tests.support.turns import ask

pytestmark = pytest.mark.django_db(transaction=True)

# What the fake model saves for each message: the user's own words, or its inference.
SAVES = {
    "My dog's name is Bori.": "My dog's name is Bori.",
    "I walk Bori every morning before work; she is a jindo.": "The user owns a Korean dog breed.",
}


def saving_responder(body: dict[str, Any]) -> Reply:
    last = body["messages"][-1]
    if forced_tool(body) is None and last["role"] == "user" and last["content"] in SAVES:
        return Reply(tool_calls=[ToolCall("remember", {"fact": SAVES[last["content"]]})])
    if last["role"] == "tool":
        return Reply(text="Noted.")
    return memory_responder(body)


async def test_a_memory_says_where_it_came_from_and_whether_it_was_said(
    model,  # noqa: F811
    alice,
    alice_client,
):
    model.responder = saving_responder
    conversation = await sync_to_async(services.create_conversation)(user=alice, title="Dogs")
    for said in SAVES:
        await ask(alice, conversation, content=said)
    await sync_to_async(memories.add_memory)(user_id=alice.pk, text="I am vegetarian.")
    saved = {m["text"]: m for m in await sync_to_async(memories.list_memories)(user_id=alice.pk)}
    stated = saved["My dog's name is Bori."]
    inferred = saved["The user owns a Korean dog breed."]
    assert (stated["basis"], inferred["basis"]) == ("stated", "inferred")
    assert saved["I am vegetarian."]["basis"] == "added"
    # The source is the user's message that said it.
    source = await Message.objects.aget(pk=stated["source"]["message_id"])
    assert (source.role, source.content) == ("user", "My dog's name is Bori.")

    page = (await sync_to_async(alice_client.get)("/settings/memory/")).content.decode()
    # Named by the words it was saved from, opening that message in its branch.
    assert f"/conversations/{conversation.pk}/?m={source.pk}#msg-{source.pk}" in page
    assert "“My dog&#x27;s name is Bori.”" in page
    assert "saved by the assistant from what you said" in page
    assert "inferred by the assistant" in page
    only = (await sync_to_async(alice_client.get)("/settings/memory/?basis=inferred")).content
    only = only.decode()
    listed = re.findall(r'<p class="memory-text">(.*?)</p>', only)
    assert listed == ["The user owns a Korean dog breed."]
    api = await sync_to_async(alice_client.get)("/api/v1/memories")
    assert {m["text"]: m["basis"] for m in api.json()["items"]} == {
        "My dog's name is Bori.": "stated",
        "The user owns a Korean dog breed.": "inferred",
        "I am vegetarian.": "added",
    }
