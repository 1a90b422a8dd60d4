"""Memories across conversations and recall within one, as the model's requests show them
(the real agent against the fake OpenAI-compatible server, on the real database)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from accounts.preferences import update_user_settings
from conversations import services
from memories import services as memories
from tests.agent.helpers import memory_responder
from tests.conversations.conftest import model  # noqa: F401  (the fixture)
from tests.support.openai_replies import Reply, ToolCall, forced_tool, message_texts
from tests.support.turns import ask

pytestmark = pytest.mark.django_db(transaction=True)


def remembering_responder(body: dict[str, Any]) -> Reply:
    """Save "My … is …" statements with the remember tool, as a model told to would."""
    offered = {t["function"]["name"] for t in body.get("tools") or []}
    last = body["messages"][-1]
    if forced_tool(body) is None and last["role"] == "user" and "remember" in offered:
        text = last.get("content") or ""
        if isinstance(text, str) and text.startswith("My "):
            return Reply(tool_calls=[ToolCall("remember", {"fact": text})])
    if last["role"] == "tool":
        return Reply(text="Noted.")
    return memory_responder(body)


def main_requests(server) -> list[dict[str, Any]]:
    return [b for b in server.requests if forced_tool(b) is None and b.get("messages")]


def last_request(server) -> str:
    return json.dumps(main_requests(server)[-1]["messages"], ensure_ascii=False)


new_conversation = sync_to_async(services.create_conversation)
add_memory = sync_to_async(memories.add_memory)
list_memories = sync_to_async(memories.list_memories)
delete_memory = sync_to_async(memories.delete_memory)
switch_memory = sync_to_async(update_user_settings)


async def test_a_fact_told_in_one_conversation_reaches_the_next(model, alice):  # noqa: F811
    model.responder = remembering_responder
    first = await new_conversation(user=alice)
    reply, _ = await ask(alice, first, content="My dog's name is Bori.")
    assert reply.finish_reason == "end_turn"
    saved = await list_memories(user_id=alice.pk)
    assert [m["text"] for m in saved] == ["My dog's name is Bori."]
    assert saved[0]["created_by"] == "agent"
    assert saved[0]["source"]["conversation_id"] == str(first.pk)

    second = await new_conversation(user=alice)
    reply, _ = await ask(alice, second, content="What is my dog called?")
    assert "My dog's name is Bori." in last_request(model)
    ledger = reply.metadata["context"]
    assert [m["id"] for m in ledger["memories"]] == [saved[0]["id"]]


async def test_another_users_memories_never_reach_the_request(model, alice, bob):  # noqa: F811
    await add_memory(user_id=alice.pk, text="My dog's name is Bori.")
    await add_memory(user_id=bob.pk, text="My dog's name is Nabi.")
    conversation = await new_conversation(user=bob)
    await ask(bob, conversation, content="What is my dog's name?")
    seen = last_request(model)
    assert "Nabi" in seen
    assert "Bori" not in seen


async def test_switching_memory_off_removes_it_from_the_next_request(model, alice):  # noqa: F811
    await add_memory(user_id=alice.pk, text="I live in Busan.")
    conversation = await new_conversation(user=alice)
    await ask(alice, conversation, content="Where do I live?")
    assert "I live in Busan." in last_request(model)
    assert "remember" in json.dumps(main_requests(model)[-1].get("tools"))

    await switch_memory(user=alice, memory_enabled=False)
    reply, _ = await ask(alice, conversation, content="Where do I live, again?")
    request = main_requests(model)[-1]
    assert "Busan" not in json.dumps(request["messages"], ensure_ascii=False)
    assert "remember" not in json.dumps(request.get("tools") or [])
    assert reply.metadata["context"]["memories"] == []


async def test_a_deleted_memory_is_gone_from_the_next_request(model, alice):  # noqa: F811
    kept = await add_memory(user_id=alice.pk, text="I am vegetarian.")
    gone = await add_memory(user_id=alice.pk, text="My locker number is 4412.")
    conversation = await new_conversation(user=alice)
    await ask(alice, conversation, content="What should I cook, given my locker number?")
    assert "4412" in last_request(model)
    await delete_memory(user_id=alice.pk, memory_id=gone["id"])
    reply, _ = await ask(alice, conversation, content="And my locker number?")
    assert "4412" not in json.dumps(
        [m for m in main_requests(model)[-1]["messages"] if m["role"] == "system"],
        ensure_ascii=False,
    )
    # Nothing relevant is left: the vegetarian fact is not about lockers, so it stays out.
    assert reply.metadata["context"]["memories"] == []
    reply, _ = await ask(alice, conversation, content="Any ideas for a vegetarian dinner?")
    assert [m["id"] for m in reply.metadata["context"]["memories"]] == [kept["id"]]


async def test_deleting_a_conversation_keeps_the_memories_it_made(model, alice):  # noqa: F811
    model.responder = remembering_responder
    conversation = await new_conversation(user=alice)
    await ask(alice, conversation, content="My favourite colour is teal.")
    await sync_to_async(services.delete_conversation)(conversation=conversation)
    saved = await list_memories(user_id=alice.pk)
    assert [m["text"] for m in saved] == ["My favourite colour is teal."]


async def test_a_fact_the_summary_lost_is_recalled_verbatim(model, alice, settings):  # noqa: F811
    def lossy(body: dict[str, Any]) -> Reply:
        systems = message_texts(body, "system")
        if systems and systems[0].startswith("You maintain the memory"):
            if "=== MERGED ===" in systems[0]:
                return Reply(text="=== MERGED ===\nThe user chatted.\n=== NEW ===\nThey chatted.")
            return Reply(text="The user talked about the weather and the weekend.")
        return memory_responder(body)

    model.responder = lossy
    settings.MEMORY_MAX_MESSAGES = 4
    settings.MEMORY_KEEP_RECENT = 2
    conversation = await new_conversation(user=alice)
    fact = "The spare key is under the blue flowerpot."
    first, _ = await ask(alice, conversation, content=fact)
    for n in range(5):
        await ask(alice, conversation, content=f"Nice weather today, number {n}.")
    reply, _ = await ask(alice, conversation, content="Where is the spare key?")
    request = main_requests(model)[-1]
    system = request["messages"][0]["content"]
    assert fact in system  # verbatim, in the recalled block
    recalled = reply.metadata["context"]["recalled_message_ids"]
    assert str(first.parent_id) in recalled  # the user's message that said it
    # A question about what is in view recalls nothing.
    reply, _ = await ask(alice, conversation, content="Nice weather today, number 9.")
    assert reply.metadata["context"]["recalled_message_ids"] == []


async def test_the_assistant_never_saves_sensitive_information(model, alice):  # noqa: F811
    """A card number the user confirmed sending stays in that conversation: the remember
    tool refuses it, the model is told why, and no memory holds it."""
    model.responder = remembering_responder
    conversation = await new_conversation(user=alice)
    reply, _ = await ask(
        alice,
        conversation,
        content="My card number is 4111 1111 1111 1111.",
        confirm_sensitive=True,
    )
    assert reply.finish_reason == "end_turn"
    assert await list_memories(user_id=alice.pk) == []
    tool_results = [
        m["content"] for m in main_requests(model)[-1]["messages"] if m["role"] == "tool"
    ]
    assert len(tool_results) == 1 and "Not saved" in tool_results[0]
    assert "4111" not in tool_results[0]
    # An ordinary fact still is saved.
    await ask(alice, conversation, content="My dog's name is Bori.")
    assert [m["text"] for m in await list_memories(user_id=alice.pk)] == ["My dog's name is Bori."]


async def test_a_masked_message_never_becomes_a_memory(model, alice):  # noqa: F811
    """The sensitive check masked what the user sent ("[card]"): the fact is refused whole,
    not kept with its holes."""
    model.responder = remembering_responder
    conversation = await new_conversation(user=alice)
    reply, _ = await ask(
        alice, conversation, content="My card is [card] and my phone is [phone], email [email]."
    )
    assert reply.finish_reason == "end_turn"
    tool_results = [
        m["content"] for m in main_requests(model)[-1]["messages"] if m["role"] == "tool"
    ]
    assert len(tool_results) == 1 and "Not saved" in tool_results[0]  # it was tried, refused
    assert await list_memories(user_id=alice.pk) == []
