"""The agent's `search_conversations` is the search people use: every word, best first,
Korean words inside sentences, never the conversation it answers in.

The real agent against the fake OpenAI-compatible server, which calls the tool and then
repeats what the tool told it.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from conversations import services
from tests.support import seed
from tests.support.turns import ask, calling

pytestmark = pytest.mark.django_db(transaction=True)


def searching(query: str, limit: int = 1):
    """Search other conversations for `query`, then say what the tool answered."""
    return calling("search_conversations", {"query": query, "limit": limit}, said="I found: ")


@sync_to_async
def conversation_with(user, title: str, said: str, *, hours_ago: int):
    conversation = services.create_conversation(user=user, title=title)
    seed.add_message(
        conversation_id=conversation.id,
        role="user",
        content=said,
        created_by=user,
        created_at=timezone.now() - timedelta(hours=hours_ago),
    )
    return conversation


def told(model) -> str:
    [result] = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    return result


async def test_the_agent_gets_the_best_match_not_the_newest(model, alice, require_postgres):
    # Ranked on PostgreSQL; SQLite's search lists the newest first (conversations/search.py).
    await conversation_with(
        alice, "Q3 planning", "The budget review is on Friday at ten.", hours_ago=48
    )
    await conversation_with(
        alice,
        "Snacks",
        "Review the trip photos later; the snack budget is small, and so on and so on.",
        hours_ago=1,
    )
    asking = await sync_to_async(services.create_conversation)(user=alice, title="Now")
    model.responder = searching("budget review")
    reply, _frames = await ask(alice, asking, content="When was the budget review again?")
    # One result asked for: the message that holds the words together, though older.
    assert "Q3 planning" in told(model) and "Snacks" not in told(model)
    assert "Friday at ten" in reply.content


async def test_the_agent_finds_a_korean_word_inside_a_sentence_but_not_here(model, alice):
    await conversation_with(
        alice, "팀 회의", "다음 주간회의록은 금요일까지 제출해야 합니다.", hours_ago=3
    )
    asking = await sync_to_async(services.create_conversation)(user=alice, title="지금")
    model.responder = searching("회의록", limit=5)
    reply, _frames = await ask(alice, asking, content="회의록 언제까지 내야 하지?")
    assert "금요일까지" in told(model) and "팀 회의" in told(model)
    # The question just asked holds the word too; the conversation it is in is not searched.
    assert "언제까지 내야" not in told(model)
    assert "금요일까지" in reply.content


async def test_a_search_of_nothing_tells_the_model_so(model, alice):
    asking = await sync_to_async(services.create_conversation)(user=alice, title="Now")
    model.responder = searching("   ")
    await ask(alice, asking, content="Search for nothing.")
    assert told(model) == "No other conversation mentions that."
