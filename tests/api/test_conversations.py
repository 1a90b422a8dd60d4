from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from conversations.models import Conversation, Project

from .conftest import make_conversation

pytestmark = pytest.mark.django_db


def test_create_answers_201_with_the_model_fields(api, alice):
    project = Project.objects.create(owner=alice, name="Work")
    response = api.post(
        "/conversations",
        {"title": "Plans", "description": "d", "project_id": project.pk, "service_id": "minu"},
    )
    assert response.status_code == 201
    body = response.json()
    assert body["title"] == "Plans"
    assert body["project_id"] == project.pk
    assert body["service_id"] == "minu"
    assert body["status"] == "active"
    assert body["message_count"] == 0
    assert body["parent_conversation_id"] is None
    assert Conversation.objects.get(pk=body["id"]).created_by == alice


def test_create_with_someone_elses_project_is_not_found(api, bob):
    project = Project.objects.create(owner=bob, name="Theirs")
    response = api.post("/conversations", {"project_id": project.pk})
    assert response.status_code == 404
    assert not Conversation.objects.exists()


def test_create_with_wrong_types_is_422_and_nothing_created(api):
    for body in [{"title": 5}, {"title": "x" * 201}, {"project_id": "abc"}, {"title": "a\x00b"}]:
        response = api.post("/conversations", body)
        assert response.status_code == 422, body
        assert response.json()["error"]["code"] == "invalid"
    assert not Conversation.objects.exists()


def test_read_shows_parent_and_forks(api, alice):
    parent = make_conversation(alice, contents=["a", "b"])
    fork = make_conversation(alice, title="F")
    Conversation.objects.filter(pk=fork.pk).update(parent_conversation=parent)
    body = api.get(f"/conversations/{parent.id}").json()
    assert body["forks"] == [{"id": str(fork.id), "title": "F"}]
    assert api.get(f"/conversations/{fork.id}").json()["parent_conversation_id"] == str(parent.id)


def test_patch_changes_only_what_is_sent(api, alice):
    conversation = make_conversation(alice, title="Old", service_id="svc")
    response = api.patch(
        f"/conversations/{conversation.id}", {"title": "New", "status": "archived"}
    )
    assert response.status_code == 200
    conversation.refresh_from_db()
    assert (conversation.title, conversation.status, conversation.service_id) == (
        "New",
        "archived",
        "svc",
    )
    assert conversation.archived_at is not None


def test_a_title_is_one_line_and_its_length_is_counted_after(api, alice):
    conversation = make_conversation(alice, title="Old")
    response = api.patch(f"/conversations/{conversation.id}", {"title": "t" * 201})
    assert response.status_code == 422
    conversation.refresh_from_db()
    assert conversation.title == "Old"
    spaced = "  Trip \n\n to   Busan " + " " * 300  # 300 spaces: under 200 once collapsed
    response = api.patch(f"/conversations/{conversation.id}", {"title": spaced})
    assert response.status_code == 200, response.content
    assert response.json()["title"] == "Trip to Busan"


def test_patch_with_unknown_status_changes_nothing(api, alice):
    conversation = make_conversation(alice, title="Old")
    response = api.patch(f"/conversations/{conversation.id}", {"title": "New", "status": "gone"})
    assert response.status_code == 422
    conversation.refresh_from_db()
    assert conversation.title == "Old"


def test_patch_project_null_clears_it(api, alice):
    project = Project.objects.create(owner=alice, name="Work")
    conversation = make_conversation(alice, project=project)
    assert api.patch(f"/conversations/{conversation.id}", {"project_id": None}).status_code == 200
    conversation.refresh_from_db()
    assert conversation.project is None


def test_delete_answers_204_and_drops_the_agent_thread(
    api, alice, fake_agent, django_capture_on_commit_callbacks
):
    conversation = make_conversation(alice, contents=["a", "b"])
    with django_capture_on_commit_callbacks(execute=True):
        response = api.delete(f"/conversations/{conversation.id}")
    assert response.status_code == 204
    assert not Conversation.objects.exists()
    assert fake_agent["delete"] == [str(conversation.id)]


def test_other_users_conversation_is_not_found_everywhere(api, bob_api, alice, fake_agent):
    conversation = make_conversation(alice, contents=["one", "two"])
    message = conversation.messages.first()
    missing = api.get("/conversations/00000000-0000-0000-0000-000000000000")
    cid = conversation.id
    for response in [
        bob_api.get(f"/conversations/{cid}"),
        bob_api.patch(f"/conversations/{cid}", {"title": "mine now"}),
        bob_api.delete(f"/conversations/{cid}"),
        bob_api.get(f"/conversations/{cid}/messages"),
        bob_api.post(f"/conversations/{cid}/messages", {"content": "hi"}),
        bob_api.post(f"/conversations/{cid}/fork", {"from_message_id": str(message.id)}),
        bob_api.post(f"/conversations/{cid}/summarize", {}),
        bob_api.get(f"/conversations/{cid}/export", format="json"),
        bob_api.post("/conversations/bulk", {"action": "archive", "ids": [str(cid)]}),
        bob_api.post("/conversations/bulk", {"action": "delete", "ids": [str(cid)]}),
        bob_api.post("/conversations/bulk", {"action": "export", "ids": [str(cid)]}),
        bob_api.post(f"/messages/{message.id}/feedback", {"rating": "up"}),
        bob_api.post(f"/messages/{message.id}/report", {"reason": "x"}),
        bob_api.delete(f"/messages/{message.id}"),
    ]:
        assert response.status_code == 404, response.request
        assert response.json()["error"]["code"] == missing.json()["error"]["code"] == "not_found"
    assert bob_api.get("/conversations").json()["items"] == []
    assert bob_api.get("/search/messages", q="one").json()["items"] == []
    conversation.refresh_from_db()
    assert conversation.title == "Plans" and conversation.message_count == 2
    assert not message.feedback.exists()


# --- list: filters, sort, pages -------------------------------------------------------
def _ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [c["id"] for c in response.json()["items"]]


def test_list_filters_by_status_project_service_and_created_range(api, alice):
    work = Project.objects.create(owner=alice, name="Work")
    a = make_conversation(alice, title="a", project=work, service_id="find")
    b = make_conversation(alice, title="b", service_id="frame")
    c = make_conversation(alice, title="c")
    Conversation.objects.filter(pk=c.pk).update(status="archived")
    old = timezone.now() - timedelta(days=10)
    Conversation.objects.filter(pk=a.pk).update(created_at=old)
    assert _ids(api.get("/conversations", status="archived")) == [str(c.id)]
    assert set(_ids(api.get("/conversations", status="active"))) == {str(a.id), str(b.id)}
    assert _ids(api.get("/conversations", project_id=work.pk)) == [str(a.id)]
    assert _ids(api.get("/conversations", service_id="frame")) == [str(b.id)]
    cut = (timezone.now() - timedelta(days=1)).isoformat()
    assert _ids(api.get("/conversations", created_before=cut)) == [str(a.id)]
    assert set(_ids(api.get("/conversations", created_after=cut))) == {str(b.id), str(c.id)}


def test_list_q_matches_titles_and_message_content(api, alice):
    a = make_conversation(alice, title="Budget review")
    b = make_conversation(alice, title="Other", contents=["the budget is tight", "ok"])
    make_conversation(alice, title="Nothing", contents=["hello"])
    assert set(_ids(api.get("/conversations", q="budget"))) == {str(a.id), str(b.id)}


@pytest.mark.parametrize("sort", ["created_at", "updated_at", "last_message_at", "message_count"])
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_list_sorts_and_pages_without_gaps_or_repeats(api, alice, sort, order):
    now = timezone.now()
    rows = []
    for i in range(7):
        c = make_conversation(alice, title=f"c{i}", contents=["x"] * (i % 3))
        # Ties on purpose: pages must stay stable using the id.
        Conversation.objects.filter(pk=c.pk).update(
            created_at=now - timedelta(minutes=i // 2),
            updated_at=now - timedelta(minutes=i // 3),
        )
        rows.append(c)
    seen: list[str] = []
    cursor = None
    while True:
        params = {"sort": sort, "order": order, "limit": 3}
        if cursor:
            params["cursor"] = cursor
        body = api.get("/conversations", **params).json()
        seen += [c["id"] for c in body["items"]]
        cursor = body["next_cursor"]
        if not cursor:
            break
    assert sorted(seen) == sorted(str(c.id) for c in rows)
    assert len(seen) == len(set(seen))
    everything = _ids(api.get("/conversations", sort=sort, order=order, limit=50))
    assert seen == everything
    values = [getattr(Conversation.objects.get(pk=pk), sort) for pk in everything]
    present = [v for v in values if v is not None]
    assert present == sorted(present, reverse=order == "desc")


def test_list_refuses_a_tampered_cursor(api, alice):
    make_conversation(alice)
    for cursor in ["garbage", "eyJ4IjoxfQ", "WyJjb252OnVwZGF0ZWRfYXQ6ZGVzYyIsWzEsMl1d"]:
        response = api.get("/conversations", cursor=cursor)
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "bad_cursor"


def test_list_refuses_unknown_sort(api):
    assert api.get("/conversations", sort="title").status_code == 422
