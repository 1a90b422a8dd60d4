"""Share links: a read-only snapshot at /s/<token>/, listed, revoked (SPEC "Sharing")."""

from __future__ import annotations

import pytest
from django.test import Client

from conversations.models import Share
from tests.support import seed

from .conftest import make_conversation

pytestmark = pytest.mark.django_db


def _path(url: str) -> str:
    return url[url.index("/s/") :]


def test_a_share_shows_the_branch_as_it_was_to_anyone(api, alice):
    conversation = make_conversation(
        alice, title="Trip to Busan", contents=["Where should we eat?", "**Milmyeon** in Seomyeon."]
    )
    conversation.summary = "owner's private summary"
    conversation.system_prompt = "owner's secret instructions"
    conversation.save()
    response = api.post(f"/conversations/{conversation.id}/shares")
    assert response.status_code == 201
    share = response.json()
    assert share["url"].startswith("http") and share["message_count"] == 2
    token = share["url"].rstrip("/").rsplit("/", 1)[-1]
    assert len(token) >= 22  # ≥ 128 bits in URL-safe base64

    # A message written after sharing stays out of the link.
    seed.add_message(conversation_id=conversation.id, role="user", content="later, private")

    page = Client().get(_path(share["url"]))  # nobody logged in
    assert page.status_code == 200
    html = page.content.decode()
    assert "Trip to Busan" in html and "Where should we eat?" in html
    assert "<strong>Milmyeon</strong>" in html  # the app's Markdown rendering
    assert "later, private" not in html
    for private in ("owner's private summary", "owner's secret instructions", alice.username):
        assert private not in html
    assert '<meta name="robots" content="noindex' in html
    assert page["X-Robots-Tag"].startswith("noindex")
    assert page["Referrer-Policy"] == "no-referrer"
    # No input box: the only form is the language switcher.
    assert "<textarea" not in html and 'id="composer"' not in html
    assert html.count("<form") == 1 and 'action="/i18n/setlang/"' in html
    assert "Made with" in html


def test_list_and_revoke(api, alice, bob_api):
    first = make_conversation(alice, title="One", contents=["a", "b"])
    second = make_conversation(alice, title="Two", contents=["c", "d"])
    one = api.post(f"/conversations/{first.id}/shares").json()
    two = api.post(f"/conversations/{second.id}/shares").json()
    assert [s["id"] for s in api.get("/shares").json()["items"]] == [two["id"], one["id"]]
    only = api.get("/shares", conversation_id=str(first.id)).json()["items"]
    assert [s["id"] for s in only] == [one["id"]]

    # Someone else can neither see, list nor revoke them.
    assert bob_api.get("/shares").json()["items"] == []
    assert bob_api.get("/shares", conversation_id=str(first.id)).status_code == 404
    assert bob_api.delete(f"/shares/{one['id']}").status_code == 404
    assert bob_api.post(f"/conversations/{first.id}/shares").status_code == 404

    assert api.delete(f"/shares/{one['id']}").status_code == 204
    assert Client().get(_path(one["url"])).status_code == 404
    assert Client().get(_path(two["url"])).status_code == 200
    assert api.delete(f"/shares/{one['id']}").status_code == 404
    assert [s["id"] for s in api.get("/shares").json()["items"]] == [two["id"]]


@pytest.mark.parametrize("bad", ["nope", "x" * 100, "%00", "..%2F..%2Fadmin", "A" * 32])
def test_unknown_or_malformed_tokens_are_404(bad):
    assert Client().get(f"/s/{bad}/").status_code == 404


@pytest.mark.parametrize("bad", ["not-a-uuid", "0" * 5000, "00000000-0000-0000-0000-000000000000"])
def test_revoking_a_bad_id_is_404_and_changes_nothing(api, alice, bad):
    conversation = make_conversation(alice, contents=["a", "b"])
    api.post(f"/conversations/{conversation.id}/shares")
    assert api.delete(f"/shares/{bad}").status_code == 404
    assert Share.objects.count() == 1


def test_deleting_the_conversation_ends_its_links(api, alice):
    conversation = make_conversation(alice, contents=["a", "b"])
    share = api.post(f"/conversations/{conversation.id}/shares").json()
    assert api.delete(f"/conversations/{conversation.id}").status_code == 204
    assert Client().get(_path(share["url"])).status_code == 404


def test_a_share_shows_the_branch_the_owner_was_on(api, alice):
    conversation = make_conversation(alice, contents=["question", "first answer"])
    question = conversation.messages.get(sequence_number=1)
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content="second answer",
        parent=question.id,
    )
    first = conversation.messages.get(sequence_number=2)
    assert (
        api.post(
            f"/conversations/{conversation.id}/switch", {"message_id": str(first.id)}
        ).status_code
        == 200
    )
    share = api.post(f"/conversations/{conversation.id}/shares").json()
    html = Client().get(_path(share["url"])).content.decode()
    assert "first answer" in html and "second answer" not in html
