"""Monthly token budgets: past the budget in force, every ask that would start a model
turn is refused before anything is stored (HTTP 429 `budget_exceeded` with Retry-After;
the socket's `error` frame); under it the send works, and a reply that crosses it
finishes whole. A user's own budget wins over their groups', the most generous group's
wins over the site's."""

from __future__ import annotations

import asyncio
import threading
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.contrib.auth.models import Group

from conversations import selectors, services
from conversations.models import Conversation, Message, ReplyRun
from conversations.replies import store
from conversations.replies.ask import Ask
from core.errors import BudgetExceeded
from tests.realtime.conftest import connected, make_token, receive_until
from tests.support.at_once import at_once
from tests.support.openai_replies import Reply
from tests.support.turns import ask
from usage import budgets
from usage import services as usage_services
from usage.models import Budget, UsageRollup

from .conftest import api_for

pytestmark = pytest.mark.django_db(transaction=True)
new_conversation = sync_to_async(services.create_conversation)


@sync_to_async
def counts(user) -> tuple[int, int, int, int]:
    """What a refused ask must leave unchanged: conversations, messages, runs, rollup."""
    return (
        Conversation.objects.filter(created_by=user).count(),
        Message.objects.filter(conversation__created_by=user).count(),
        ReplyRun.objects.filter(conversation__created_by=user).count(),
        sum(UsageRollup.objects.filter(user=user).values_list("replies", flat=True)),
    )


@sync_to_async
def used(user) -> int:
    return budgets.used_since(user.pk, budgets.month_start(datetime.now(UTC)))


async def spend(user, conversation) -> int:
    """Have one real reply; return the user's tokens this month after it."""
    await ask(user, conversation, content="Tell me something about the sea.")
    return await used(user)


async def test_over_the_budget_a_send_over_http_is_refused_and_nothing_is_stored(
    model, alice, settings
):
    conversation = await new_conversation(user=alice)
    spent = await spend(alice, conversation)
    settings.CHAT_MONTHLY_TOKEN_BUDGET = spent  # used up exactly
    before = await counts(alice)
    api = await api_for(alice)
    response = await api.post(f"/conversations/{conversation.pk}/messages", {"content": "More?"})
    assert response.status_code == 429, response.content
    error = response.json()["error"]
    assert error["code"] == "budget_exceeded"
    assert f"{spent:,}" in error["message"] and "(UTC)" in error["message"]
    assert 0 < int(response["Retry-After"]) <= 31 * 24 * 3600
    created = await api.post("/conversations", {"initial_message": {"content": "New chat"}})
    assert created.status_code == 429 and created.json()["error"]["code"] == "budget_exceeded"
    assert await counts(alice) == before


async def test_over_the_budget_regenerate_and_continue_are_refused_too(model, alice, settings):
    conversation = await new_conversation(user=alice)
    await spend(alice, conversation)
    reply = await Message.objects.filter(role="assistant").alatest("created_at")
    settings.CHAT_MONTHLY_TOKEN_BUDGET = 1
    before = await counts(alice)
    api = await api_for(alice)
    again = await api.post(f"/messages/{reply.pk}/regenerate", {})
    edit = await api.post(f"/messages/{reply.parent_id}/edit", {"content": "Other words"})
    for response in (again, edit):
        assert response.status_code == 429 and response.json()["error"]["code"] == "budget_exceeded"
    assert await counts(alice) == before


async def test_over_the_budget_the_socket_answers_budget_exceeded_and_stores_nothing(
    model, alice, settings
):
    conversation = await new_conversation(user=alice)
    settings.CHAT_MONTHLY_TOKEN_BUDGET = await spend(alice, conversation)
    before = await counts(alice)
    comm = await connected(conversation.pk, await make_token(alice))
    await comm.send_json_to({"type": "message.send", "content": "One more, please."})
    error = (await receive_until(comm, "error"))[-1]
    assert error["code"] == "budget_exceeded" and error["retry_after"] >= 1
    assert "token budget" in error["detail"]
    await comm.disconnect()
    assert await counts(alice) == before


async def test_under_the_budget_a_send_works_and_the_reply_that_crosses_it_finishes_whole(
    model, alice, settings
):
    settings.CHAT_MONTHLY_TOKEN_BUDGET = 5  # far less than one reply uses
    conversation = await new_conversation(user=alice)
    reply, frames = await ask(alice, conversation, content="Write a few sentences on rivers.")
    assert reply.finish_reason == "end_turn" and reply.content
    finished = next(f for f in frames if f["type"] == "generation.finished")
    assert finished["message"]["content"] == reply.content  # not cut at the budget
    assert await used(alice) > 5
    response = await (await api_for(alice)).post(
        f"/conversations/{conversation.pk}/messages", {"content": "And lakes?"}
    )
    assert response.status_code == 429


async def test_a_group_budget_and_a_users_own_budget_apply(model, alice, bob, settings):
    settings.CHAT_MONTHLY_TOKEN_BUDGET = 0  # no site-wide limit
    conversation = await new_conversation(user=alice)
    spent = await spend(alice, conversation)

    @sync_to_async
    def set_budgets(*, group_tokens: list[int], own: int | None) -> tuple[int | None, int | None]:
        Budget.objects.all().delete()
        for n, tokens in enumerate(group_tokens):
            group = Group.objects.create(name=f"team {n} {tokens} {own}")
            group.user_set.add(alice, bob)
            Budget.objects.create(group=group, monthly_tokens=tokens)
        if own is not None:
            Budget.objects.create(user=alice, monthly_tokens=own)
        return budgets.budget_limit(alice), budgets.budget_limit(bob)

    async def send() -> int:
        api = await api_for(alice)
        response = await api.post(f"/conversations/{conversation.pk}/messages", {"content": "Hi"})
        return response.status_code

    # The most generous group's budget applies: here both are used up.
    assert await set_budgets(group_tokens=[spent, spent // 2], own=None) == (spent, spent)
    assert await send() == 429
    # A user's own budget wins over their groups' (bob keeps the group's).
    assert await set_budgets(group_tokens=[spent], own=spent * 100) == (spent * 100, spent)
    assert await send() == 201
    # A user's own 0 means no limit, whatever the groups say; a group's 0 is the most generous.
    assert await set_budgets(group_tokens=[1], own=0) == (None, 1)
    assert await set_budgets(group_tokens=[1, 0], own=None) == (None, None)
    # No budget row at all: the site's setting.
    settings.CHAT_MONTHLY_TOKEN_BUDGET = 3
    assert await set_budgets(group_tokens=[], own=None) == (3, 3)
    assert await send() == 429


async def test_a_summary_is_counted_and_refused_past_the_budget(model, alice, settings):
    conversation = await new_conversation(user=alice)
    spent = await spend(alice, conversation)
    api = await api_for(alice)
    summarized = await api.post(f"/conversations/{conversation.pk}/summarize")
    assert summarized.status_code == 200, summarized.content
    after_summary = await used(alice)
    assert after_summary > spent  # the summary's model call is the user's usage
    settings.CHAT_MONTHLY_TOKEN_BUDGET = after_summary  # used up exactly
    asked = len(model.requests)
    for _ in range(3):
        refused = await api.post(f"/conversations/{conversation.pk}/summarize")
        assert refused.status_code == 429, refused.content
        assert refused.json()["error"]["code"] == "budget_exceeded"
    assert len(model.requests) == asked  # no model call on their behalf
    assert await used(alice) == after_summary


@sync_to_async
def seed_usage(user, tokens: int) -> None:
    """Record `tokens` the user already used this month (an earlier reply's)."""
    conversation = services.create_conversation(user=user, title="earlier")
    usage_services.record_usage(
        user_id=user.pk,
        conversation_id=conversation.pk,
        model="fake-model",
        tokens=(tokens, 0),
        at=datetime.now(UTC),
        replies=1,
    )


@sync_to_async
def reservations(user) -> list[tuple[str, int]]:
    """Each of the user's runs: its status and the tokens it held while it ran."""
    runs = ReplyRun.objects.filter(conversation__created_by=user).order_by("started_at")
    return list(runs.values_list("status", "reserved_tokens"))


async def test_twelve_sends_at_once_with_room_for_one_reply_accept_at_most_two(
    model, alice, settings
):
    settings.CHAT_MONTHLY_TOKEN_BUDGET = 3_000
    await seed_usage(alice, 2_900)  # room for one short reply
    conversations = [await new_conversation(user=alice) for _ in range(12)]
    answering = asyncio.Event()

    def slow(body):  # every reply still runs while the other sends are claimed
        answering.set()
        return Reply(text="A short answer about the sea.", delay=1.5)

    model.responder = slow
    api = await api_for(alice)

    async def send(conversation) -> Any:
        return await api.post(f"/conversations/{conversation.pk}/messages", {"content": "Hi!"})

    async def held_while_running() -> int:
        await answering.wait()
        return await sync_to_async(selectors.held_by_running_replies)(alice)

    *responses, held = await asyncio.gather(*map(send, conversations), held_while_running())
    accepted = [r for r in responses if r.status_code == 201]
    refused = [r for r in responses if r.status_code == 429]
    assert 1 <= len(accepted) <= 2 and len(accepted) + len(refused) == 12, [
        r.status_code for r in responses
    ]
    for response in refused:
        error = response.json()["error"]
        assert error["code"] == "budget_exceeded"
        assert "still being written" in error["message"] or "(UTC)" in error["message"]
    # The mechanism: each accepted reply held a reservation while it ran (the prompt and
    # room for its answer), and once stored holds nothing: its real usage counts instead.
    assert held >= settings.CHAT_BUDGET_RESERVE_TOKENS
    runs = await reservations(alice)
    assert len(runs) == len(accepted)
    assert all(status == "finished" and tokens > 1_000 for status, tokens in runs)
    assert await sync_to_async(selectors.held_by_running_replies)(alice) == 0
    assert await used(alice) > 2_900


async def test_a_reservation_refusal_says_to_wait_and_ends_when_the_reply_is_stored(
    model, alice, settings
):
    settings.CHAT_MONTHLY_TOKEN_BUDGET = 3_000
    await seed_usage(alice, 2_000)  # room for one reply's reservation, not two
    first, second = await new_conversation(user=alice), await new_conversation(user=alice)
    asked, gate = threading.Event(), threading.Event()

    def held_reply(body):
        asked.set()
        gate.wait(10)
        return "A short answer."

    model.responder = held_reply
    api = await api_for(alice)
    running = asyncio.ensure_future(
        api.post(f"/conversations/{first.pk}/messages", {"content": "Tell me"})
    )
    assert await asyncio.to_thread(asked.wait, 10)  # claimed: its reservation is committed
    refused = await api.post(f"/conversations/{second.pk}/messages", {"content": "And you?"})
    assert refused.status_code == 429
    assert "still being written" in refused.json()["error"]["message"]
    assert 1 <= int(refused["Retry-After"]) <= 60  # not the month's reset
    gate.set()
    assert (await running).status_code == 201
    again = await api.post(f"/conversations/{second.pk}/messages", {"content": "And you?"})
    assert again.status_code == 201, again.content


def test_claims_in_parallel_threads_see_each_others_reservations(alice, settings, require_postgres):
    """Claims on different conversations lock nothing in common but the user: without the
    lock each would check the budget before the others' reservations were committed."""
    settings.CHAT_MONTHLY_TOKEN_BUDGET = 3_000
    async_to_sync(seed_usage)(alice, 2_900)
    conversations = [services.create_conversation(user=alice) for _ in range(6)]

    def claim(conversation) -> str:
        try:
            store.claim_reply(
                user=alice,
                conversation_id=conversation.pk,
                ask=Ask.send("Hello"),
                run_id=uuid.uuid4(),
                owner="test",
            )
        except BudgetExceeded:
            return "refused"
        return "claimed"

    outcomes = at_once(claim, conversations)
    assert sorted(map(str, outcomes)) == ["claimed"] + ["refused"] * 5
    assert selectors.held_by_running_replies(alice) >= settings.CHAT_BUDGET_RESERVE_TOKENS
