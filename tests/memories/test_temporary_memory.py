"""A temporary conversation neither saves nor reads memories, and its words are never
recalled in another conversation (the real agent against the fake model server)."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from conversations import search, services
from conversations.models import Message
from conversations.replies import Ask, start_reply
from conversations.services import NewConversation
from memories import services as memories
from tests.conversations.conftest import model  # noqa: F401  (the fixture)
from tests.support.turns import ask

from .test_memory_turns import last_request, main_requests, remembering_responder

pytestmark = pytest.mark.django_db(transaction=True)

list_memories = sync_to_async(memories.list_memories)
add_memory = sync_to_async(memories.add_memory)


async def test_a_fact_told_in_a_temporary_conversation_is_not_remembered(model, alice):  # noqa: F811
    model.responder = remembering_responder
    await add_memory(user_id=alice.pk, text="I live in Busan.")
    started = await start_reply(
        user=alice,
        ask=Ask.send("My dog's name is Bori."),
        new_conversation=NewConversation(temporary=True),
    )
    reply = await started.assistant_message()
    assert reply.finish_reason == "end_turn"
    assert started.conversation.temporary
    request = main_requests(model)[-1]
    assert "remember" not in json.dumps(request.get("tools") or [])
    assert "Busan" not in last_request(model)  # no memory is read into it either
    assert [m["text"] for m in await list_memories(user_id=alice.pk)] == ["I live in Busan."]


async def test_a_temporary_conversation_is_never_recalled_in_another(model, alice):  # noqa: F811
    started = await start_reply(
        user=alice,
        ask=Ask.send("The vault code is walrus-42."),
        new_conversation=NewConversation(temporary=True),
    )
    await started.assistant_message()
    other = await sync_to_async(services.create_conversation)(user=alice, title="Kept")
    found = await sync_to_async(search.search_other_conversations)(
        user_id=alice.pk, query="walrus", exclude_conversation_id=other.pk
    )
    assert found == []
    await ask(alice, other, content="What is the vault code? walrus")
    assert "walrus-42" not in last_request(model)
    assert await Message.objects.filter(conversation=started.conversation).acount() == 2
