"""Round trips found broken from outside: feedback after a reload, message filters,
conversations without messages in the list's order, summaries rendered as Markdown."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from conversations.models import Message
from tests.support import seed

from .conftest import make_conversation

pytestmark = pytest.mark.django_db


def _body(response) -> bytes:
    return b"".join(response)  # an async stream, read the way a sync server would


def _reply(conversation) -> Message:
    return conversation.messages.filter(role="assistant").order_by("sequence_number").first()


def test_feedback_is_in_the_message_json_of_the_list_and_the_page(api, alice):
    conversation = make_conversation(alice, contents=["q1", "a1", "q2", "a2"])
    reply = _reply(conversation)
    api.post(f"/messages/{reply.id}/feedback", {"rating": "down", "comment": "made up"})
    items = api.get(f"/conversations/{conversation.id}/messages").json()["items"]
    by_id = {m["id"]: m for m in items}
    assert by_id[str(reply.id)]["feedback"] == {"rating": "down", "comment": "made up"}
    assert [m["feedback"] for m in items if m["id"] != str(reply.id)] == [None, None, None]

    client = Client()
    client.force_login(alice)
    page = client.get(f"/conversations/{conversation.id}/").content.decode()
    item = page[page.index(f'id="msg-{reply.id}"') :]
    item = item[: item.index('<li class="message', 10)]
    assert 'data-action="down" aria-pressed="true"' in item
    assert 'data-action="up" aria-pressed="false"' in item
    fragment = client.get(f"/conversations/{conversation.id}/messages/{reply.id}/fragment/")
    assert 'data-action="down" aria-pressed="true"' in fragment.content.decode()


def test_feedback_on_a_users_own_message_is_refused(api, alice):
    conversation = make_conversation(alice, contents=["q1", "a1"])
    question = conversation.messages.get(sequence_number=1)
    response = api.post(f"/messages/{question.id}/feedback", {"rating": "up"})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid"
    assert not question.feedback.exists()


def test_feedback_travels_in_exports_with_metadata_and_back_in(api, alice):
    conversation = make_conversation(alice, contents=["q1", "a1"])
    reply = _reply(conversation)
    api.post(f"/messages/{reply.id}/feedback", {"rating": "up", "comment": "exact"})
    url = f"/conversations/{conversation.id}/export"
    data = json.loads(_body(api.get(url, format="json", include_metadata=1)))
    assert [m.get("feedback") for m in data["messages"]] == [
        None,
        {"rating": "up", "comment": "exact"},
    ]
    markdown = _body(api.get(url, format="markdown", include_metadata=1)).decode()
    assert "rated up: exact" in markdown
    plain = _body(api.get(url, format="json"))
    assert b"feedback" not in plain  # without metadata: no ratings

    copy = api.post_raw("/conversations/import", json.dumps(data))
    assert copy.status_code == 201
    items = api.get(f"/conversations/{copy.json()['id']}/messages").json()["items"]
    assert [m["feedback"] for m in items] == [None, {"rating": "up", "comment": "exact"}]


def test_messages_filter_by_role_part_and_tool_use(api, alice):
    conversation = make_conversation(alice, contents=["q1", "a1", "q2"])
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content="It is 21°C in Seoul.",
        parts=[
            {"type": "tool_call", "name": "weather", "args": {"city": "Seoul"}},
            {"type": "tool_result", "name": "weather", "content": "21"},
        ],
    )
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content="From your documents.",
        parts=[{"type": "references", "items": [{"document_id": 1}]}],
    )
    url = f"/conversations/{conversation.id}/messages"

    def contents(**params):
        response = api.get(url, branch="all", **params)
        assert response.status_code == 200, response.content
        return [m["content"] for m in response.json()["items"]]

    assert contents(role="user") == ["q1", "q2"]
    assert contents(role="assistant") == ["a1", "It is 21°C in Seoul.", "From your documents."]
    assert contents(part="tool_call") == ["It is 21°C in Seoul."]
    assert contents(part="references") == ["From your documents."]
    assert contents(part="thinking") == ["a1"]
    assert contents(has_tool="true") == ["It is 21°C in Seoul."]
    assert "It is 21°C in Seoul." not in contents(has_tool="false", role="assistant")
    for bad in ({"role": "robot"}, {"part": "image"}, {"has_tool": "maybe"}):
        response = api.get(url, **bad)
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "invalid"


def test_message_filters_on_the_page(alice):
    conversation = make_conversation(alice, contents=["find me", "the answer"])
    client = Client()
    client.force_login(alice)
    page = client.get(f"/conversations/{conversation.id}/", {"role": "user"}).content.decode()
    assert "find me" in page and "the answer" not in page
    assert 'id="filter-banner"' in page
    page = client.get(f"/conversations/{conversation.id}/", {"role": "robot"})
    assert page.status_code == 200 and "the answer" in page.content.decode()  # shown unfiltered
    assert 'class="banner error"' in page.content.decode()


def test_search_filters_by_role_and_date_range(api, alice):
    old = make_conversation(alice, title="Old", contents=["budget plan", "budget reply"])
    Message.objects.filter(conversation=old).update(created_at=timezone.now() - timedelta(days=30))
    make_conversation(alice, title="New", contents=["budget again", "budget answer"])

    def found(**params):
        response = api.get("/search/messages", q="budget", **params)
        assert response.status_code == 200, response.content
        return sorted(
            hit["snippet"].replace("<mark>", "").replace("</mark>", "")
            for hit in response.json()["items"]
        )

    assert found(role="user") == ["budget again", "budget plan"]
    week_ago = (timezone.now() - timedelta(days=7)).isoformat()
    assert found(after=week_ago) == ["budget again", "budget answer"]
    assert found(before=week_ago, role="assistant") == ["budget reply"]
    assert api.get("/search/messages", q="budget", after="9999-99-99").status_code == 422

    client = Client()
    client.force_login(alice)
    page = client.get("/conversations/", {"q": "budget", "role": "assistant"}).content.decode()
    assert "<mark>budget</mark> answer" in page and "<mark>budget</mark> again" not in page


@pytest.mark.parametrize("order", ["desc", "asc"])
def test_conversations_without_messages_come_last_in_both_orders(api, alice, order):
    empty = [make_conversation(alice, title=f"Empty {i}") for i in range(3)]
    talked = [
        make_conversation(alice, title=f"Talked {i}", contents=["hi", "hello"]) for i in range(3)
    ]
    seen: list[str] = []
    cursor = None
    while True:
        params = {"sort": "last_message_at", "order": order, "limit": 2}
        if cursor:
            params["cursor"] = cursor
        body = api.get("/conversations", **params).json()
        seen += [c["title"] for c in body["items"]]
        cursor = body["next_cursor"]
        if not cursor:
            break
    assert len(seen) == 6 and len(set(seen)) == 6
    assert set(seen[:3]) == {c.title for c in talked}
    assert set(seen[3:]) == {c.title for c in empty}


def test_the_summary_panel_renders_markdown(alice):
    conversation = make_conversation(alice, contents=["q", "a"])
    conversation.summary = "## 주요 내용\n- 부산 여행 <script>alert(1)</script>"
    conversation.save(update_fields=["summary"])
    client = Client()
    client.force_login(alice)
    page = client.get(f"/conversations/{conversation.id}/").content.decode()
    panel = page[page.index('id="summary-text"') :]
    panel = panel[: panel.index("</div>")]
    assert "<h2>주요 내용</h2>" in panel and "<li>부산 여행" in panel
    assert "<script>" not in panel and "## " not in panel
    fragment = client.get(f"/conversations/{conversation.id}/summary/fragment/").content.decode()
    assert "<h2>주요 내용</h2>" in fragment and "<script>" not in fragment
