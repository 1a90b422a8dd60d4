"""Usage figures are the sums of the replies' own turn usage (`metadata.usage`), by model
and by day, for the API, the page and the staff CSV alike; a user sees only their own.
The real agent against the fake model server, which reports each turn's usage."""

from __future__ import annotations

import csv
import io
from collections import defaultdict

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test import Client
from django.utils import timezone

from agent.prompts import CONTINUE_NOTE
from conversations import services
from conversations.models import Conversation, Message
from core import rls
from tests.agent.helpers import is_summarizer_request, memory_responder
from tests.support.openai_replies import Reply, forced_tool, message_texts
from tests.support.turns import ask
from usage.backfill import backfill
from usage.models import ConversationMonth, UsageRollup

from .conftest import api_for

pytestmark = pytest.mark.django_db(transaction=True)
new_conversation = sync_to_async(services.create_conversation)


@sync_to_async
def expected_usage(user) -> dict[str, dict[str, int]]:
    """Sum the user's stored replies' `metadata.usage` by model and by day."""
    sums: dict[str, dict[str, int]] = {"model": defaultdict(int), "day": defaultdict(int)}
    replies = Message.objects.filter(
        conversation__created_by=user, role=Message.Role.ASSISTANT
    ).exclude(run_id=None)
    for m in replies:
        usage = m.metadata.get("usage") or {}
        tokens = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
        sums["model"][m.model] += tokens
        sums["day"][m.created_at.date().isoformat()] += tokens
    return {k: dict(v) for k, v in sums.items()}


def cut_then_go_on(body: dict) -> Reply:
    """Answer at the length limit first, then the rest after a continue."""
    if forced_tool(body) or is_summarizer_request(body):
        return memory_responder(body)
    if any(CONTINUE_NOTE[:30] in t for t in message_texts(body)):
        return Reply(text=" four five six seven eight nine ten.")
    return Reply(text="One two three", finish_reason="length")


def by_key(body: dict) -> dict[str, int]:
    return {item["key"]: item["total_tokens"] for item in body["items"]}


async def test_my_usage_equals_the_sum_of_my_replies_turn_usage_by_model_and_by_day(model, alice):
    conversation = await new_conversation(user=alice)
    first, _ = await ask(alice, conversation, content="Tell me about Jeju island.")
    await ask(alice, conversation, content="And about Busan, briefly.")
    await ask(alice, conversation, kind="regenerate", message_id=first.pk)
    expected = await expected_usage(alice)
    assert sum(expected["model"].values()) > 0
    api = await api_for(alice)
    for group in ("model", "day"):
        response = await api.get("/usage", group=group)
        assert response.status_code == 200, response.content
        body = response.json()
        assert by_key(body) == expected[group]
        assert body["total"]["total_tokens"] == sum(expected[group].values())
        assert body["total"]["replies"] == 3
    # The rollup was written with the replies (one row per day, model and conversation).
    assert await UsageRollup.objects.filter(user=alice).acount() >= 1


async def test_a_continued_reply_counts_only_its_own_turn_not_the_cut_off_text_again(model, alice):
    model.responder = cut_then_go_on
    conversation = await new_conversation(user=alice)
    cut, _ = await ask(alice, conversation, content="Count to ten in words.")
    whole, _ = await ask(alice, conversation, kind="continue", message_id=cut.pk)
    turns = [m.metadata["usage"] for m in (cut, whole)]
    expected = sum(u["input_tokens"] + u["output_tokens"] for u in turns)
    body = (await (await api_for(alice)).get("/usage", group="model")).json()
    assert body["total"]["total_tokens"] == expected
    # `tokens_used` of the continued reply holds the cut-off part again: not summed.
    assert whole.tokens_used > whole.metadata["usage"]["output_tokens"]


async def test_another_users_usage_is_not_in_mine_and_the_staff_csv_has_both(
    model, alice, bob, staff
):
    await ask(alice, await new_conversation(user=alice), content="Alice asks one thing.")
    await ask(bob, await new_conversation(user=bob), content="Bob asks a different thing.")
    await ask(bob, await new_conversation(user=bob), content="Bob asks once more.")
    mine = (await (await api_for(alice)).get("/usage", group="model")).json()
    alice_total = sum((await expected_usage(alice))["model"].values())
    bob_total = sum((await expected_usage(bob))["model"].values())
    assert mine["total"]["total_tokens"] == alice_total and mine["total"]["replies"] == 1
    response = await (await api_for(staff)).get("/admin/usage", group="user", format="csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith("attachment;")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    totals = {row["user"]: int(row["total_tokens"]) for row in rows}
    assert totals == {"alice": alice_total, "bob": bob_total, "total": alice_total + bob_total}
    assert {row["user"]: row["replies"] for row in rows}["bob"] == "2"


async def test_the_usage_pages_show_the_same_figures(model, alice, staff):
    conversation = await new_conversation(user=alice, title="Trip planning")
    await ask(alice, conversation, content="Plan a day in Gyeongju.")
    total = sum((await expected_usage(alice))["model"].values())

    @sync_to_async
    def pages() -> tuple[str, str]:
        client = Client()
        client.force_login(alice)
        mine = client.get("/usage/")
        client.force_login(staff)
        every = client.get("/admin/usage/")
        assert mine.status_code == every.status_code == 200
        return mine.content.decode(), every.content.decode()

    mine, every = await pages()
    figure = f"{total:,}"
    assert f"<strong>{figure}</strong>" in mine and '<svg class="day-bars"' in mine
    assert f"<strong>{figure}</strong>" in every and "Trip planning" in every


async def test_deleting_a_conversation_refunds_nothing_and_it_shows_as_deleted(model, alice, staff):
    conversation = await new_conversation(user=alice, title="Soon gone")
    await ask(alice, conversation, content="Something to delete later.")
    before = (await (await api_for(alice)).get("/usage")).json()["total"]
    await sync_to_async(services.delete_conversation)(conversation=conversation)
    assert not await Conversation.objects.filter(pk=conversation.pk).aexists()
    after = (await (await api_for(alice)).get("/usage")).json()["total"]
    assert after == before and after["total_tokens"] > 0

    @sync_to_async
    def staff_page() -> str:
        client = Client()
        client.force_login(staff)
        return client.get("/admin/usage/").content.decode()

    page = await staff_page()
    assert "(deleted conversation)" in page and "Soon gone" not in page


async def test_the_backfill_rebuilds_the_same_rollup_from_the_stored_replies(
    model, alice, require_postgres
):  # the rebuild is PostgreSQL's (SQLite has no backfill)
    conversation = await new_conversation(user=alice)
    first, _ = await ask(alice, conversation, content="First question here.")
    await ask(alice, conversation, kind="regenerate", message_id=first.pk)

    @sync_to_async
    def rebuild() -> tuple[list, list]:
        fields = ("day", "user_id", "model", "conversation_id", "input_tokens", "output_tokens")
        fields += ("replies",)
        with rls.maintenance():
            live = sorted(UsageRollup.objects.values_list(*fields))
            months = sorted(ConversationMonth.objects.values_list("month", *fields[3:]))
            UsageRollup.objects.all().delete()
            ConversationMonth.objects.all().delete()
            with connection.cursor() as cursor:
                backfill(cursor)
            rebuilt = sorted(UsageRollup.objects.values_list(*fields))
            again = sorted(ConversationMonth.objects.values_list("month", *fields[3:]))
            return live + months, rebuilt + again

    live, rebuilt = await rebuild()
    assert live == rebuilt and live[0][-1] == 2 and len(live) == 2  # a day row, a month row
    assert live[0][0] == timezone.now().date()
