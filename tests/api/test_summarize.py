from __future__ import annotations

import asyncio

import pytest

from conversations.models import Conversation
from conversations.replies import summaries
from tests.support import seed

from .conftest import make_conversation

pytestmark = pytest.mark.django_db(transaction=True)


def test_summarize_stores_the_summary_and_marks_the_conversation(api, alice, fake_agent):
    conversation = make_conversation(alice, contents=["We plan a trip", "Where to?"])
    response = api.post(f"/conversations/{conversation.id}/summarize", {"max_length": 100})
    assert response.status_code == 200
    body = response.json()
    assert body["summary"].startswith("Main points")
    assert body["status"] == "summarized"
    assert body["summary_at"]
    assert fake_agent["summarize"] == [(["We plan a trip", "Where to?"], 100)]


def test_summarize_without_a_body_uses_500_words(api, alice, fake_agent):
    conversation = make_conversation(alice, contents=["a", "b"])
    response = api.client.post(
        f"/api/v1/conversations/{conversation.id}/summarize", headers=api.headers
    )
    assert response.status_code == 200, response.content
    assert fake_agent["summarize"][0][1] == 500


def test_summarize_refuses_an_empty_conversation_or_bad_length(api, alice, fake_agent):
    conversation = make_conversation(alice)
    assert api.post(f"/conversations/{conversation.id}/summarize", {}).status_code == 422
    conversation = make_conversation(alice, contents=["a"])
    response = api.post(f"/conversations/{conversation.id}/summarize", {"max_length": 0})
    assert response.status_code == 422
    assert fake_agent["summarize"] == []


def test_archived_conversation_stays_archived_when_summarized(api, alice, fake_agent):
    conversation = make_conversation(alice, contents=["a"])
    Conversation.objects.filter(pk=conversation.pk).update(status="archived")
    assert api.post(f"/conversations/{conversation.id}/summarize", {}).json()["status"] == (
        "archived"
    )


def test_auto_summary_waits_for_50_messages_then_summarizes(alice, fake_agent):
    conversation = make_conversation(alice, contents=["m"] * 50)
    assert asyncio.run(summaries.maybe_auto_summarize(conversation.id)) is None
    conversation = make_conversation(alice, contents=["m"] * 51)
    done = asyncio.run(summaries.maybe_auto_summarize(conversation.id))
    assert done is not None and done.summary and done.status == "summarized"
    # Right after a summary, nothing new to summarize.
    assert asyncio.run(summaries.maybe_auto_summarize(conversation.id)) is None


def test_auto_summary_past_10000_tokens(alice, fake_agent):
    conversation = make_conversation(alice, contents=["a", "b"])
    Conversation.objects.filter(pk=conversation.pk).update(total_tokens_used=10_001)
    assert asyncio.run(summaries.maybe_auto_summarize(conversation.id)) is not None


def test_auto_summary_never_raises(alice, monkeypatch):
    from conversations.replies import summaries

    async def broken(**kwargs):
        raise RuntimeError("model down")

    monkeypatch.setattr(summaries, "asummarize_for_conversation", broken)
    conversation = make_conversation(alice, contents=["m"] * 51)
    assert asyncio.run(summaries.maybe_auto_summarize(conversation.id)) is None


def test_summarize_with_an_empty_json_body(api, alice, fake_agent):
    conversation = make_conversation(alice, contents=["a", "b"])
    response = api.client.post(
        f"/api/v1/conversations/{conversation.id}/summarize",
        data=b"",
        content_type="application/json",
        headers=api.headers,
    )
    assert response.status_code == 200, response.content


def _say(conversation, *contents):
    for i, content in enumerate(contents):
        seed.add_message(
            conversation_id=conversation.id,
            role="user" if i % 2 == 0 else "assistant",
            content=content,
            created_by=conversation.created_by if i % 2 == 0 else None,
        )


def _auto(conversation):
    return asyncio.run(summaries.maybe_auto_summarize(conversation.id))


def test_an_automatic_summary_rolls_on_from_the_last_one(alice, fake_agent):
    conversation = make_conversation(alice, contents=[f"old {i}" for i in range(51)])
    first = _auto(conversation)
    assert fake_agent["summarize"][0][0][-1] == "old 50" and fake_agent["previous"] == [""]
    assert first.summary_through.content == "old 50"
    _say(conversation, *[f"new {i}" for i in range(20)])
    second = _auto(conversation)
    # Only what was said since, with the summary so far: not the 71 messages again.
    assert fake_agent["summarize"][1][0] == [f"new {i}" for i in range(20)]
    assert fake_agent["previous"][1] == first.summary
    assert "new 19" in second.summary and second.summary_through.content == "new 19"


def test_a_summary_of_another_branch_is_not_continued(alice, fake_agent):
    conversation = make_conversation(alice, contents=[f"old {i}" for i in range(51)])
    _auto(conversation)
    # A new version of "old 10" (as an edit makes): the branch goes on from "old 9".
    fork_point = conversation.messages.get(content="old 9")
    seed.add_message(
        conversation_id=conversation.id, role="user", content="other 0", parent=fork_point
    )
    _say(conversation, *[f"other {i}" for i in range(1, 21)])
    _auto(conversation)
    # The last summary covered old 10-50, no longer on the branch: written anew.
    assert fake_agent["previous"][1] == ""
    assert fake_agent["summarize"][1][0] == [f"old {i}" for i in range(10)] + [
        f"other {i}" for i in range(21)
    ]


def test_the_summarize_button_writes_the_summary_anew(api, alice, fake_agent):
    conversation = make_conversation(alice, contents=[f"old {i}" for i in range(51)])
    _auto(conversation)
    _say(conversation, *[f"new {i}" for i in range(20)])
    response = api.post(f"/conversations/{conversation.id}/summarize", {})
    assert response.status_code == 200
    assert len(fake_agent["summarize"][1][0]) == 71 and fake_agent["previous"][1] == ""


def test_a_summary_whose_last_message_was_deleted_is_written_anew(api, alice, fake_agent):
    conversation = make_conversation(alice, contents=[f"old {i}" for i in range(51)])
    _auto(conversation)
    last = conversation.messages.get(content="old 50")
    assert api.delete(f"/messages/{last.pk}").status_code == 204
    _say(conversation, *[f"new {i}" for i in range(20)])
    _auto(conversation)
    assert fake_agent["previous"][1] == ""
    assert fake_agent["summarize"][1][0][-1] == "new 19"
