"""GET/POST /prompts, GET/PATCH/DELETE /prompts/{id}: yours, shared ones, and refusals."""

from __future__ import annotations

import pytest

from audit.models import AuditEntry
from prompts.models import Prompt
from tests.api.conftest import ApiClient

pytestmark = pytest.mark.django_db

REVIEW = {
    "command": "review",
    "title": "Review my code",
    "content": (
        "Review this {{language}} code for bugs, then for style:\n\n{{code}}\n\n{{ language }}"
    ),
}


@pytest.fixture
def staff_api(alice, client) -> ApiClient:
    alice.is_staff = True
    alice.save(update_fields=["is_staff"])
    from accounts.tokens import create_api_token

    return ApiClient(client, create_api_token(user=alice, name="staff").secret)


def test_a_prompt_is_saved_listed_read_changed_and_deleted(api):
    created = api.post("/prompts", REVIEW)
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["command"], body["title"], body["content"]) == (
        "review",
        "Review my code",
        REVIEW["content"],
    )
    assert body["variables"] == ["language", "code"]  # each once, in order
    assert body["owner_is_me"] is True and body["shared"] is False
    assert [p["id"] for p in api.get("/prompts").json()["items"]] == [body["id"]]
    changed = api.patch(f"/prompts/{body['id']}", {"command": "code-review", "title": "검토"})
    assert changed.status_code == 200
    assert (changed.json()["command"], changed.json()["title"]) == ("code-review", "검토")
    assert changed.json()["content"] == REVIEW["content"]  # untouched fields stay
    assert api.delete(f"/prompts/{body['id']}").status_code == 204
    assert api.get(f"/prompts/{body['id']}").status_code == 404
    assert not Prompt.objects.exists()


def test_a_command_is_once_per_owner_but_two_people_may_both_have_it(api, bob_api):
    assert api.post("/prompts", REVIEW).status_code == 201
    again = api.post("/prompts", {**REVIEW, "title": "Another"})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "conflict"
    assert "/review" in again.json()["error"]["message"]
    assert Prompt.objects.count() == 1
    assert bob_api.post("/prompts", REVIEW).status_code == 201  # bob's own /review
    other = api.post("/prompts", {**REVIEW, "command": "other"}).json()
    renamed = api.patch(f"/prompts/{other['id']}", {"command": "review"})
    assert renamed.status_code == 409
    assert Prompt.objects.get(pk=other["id"]).command == "other"  # nothing changed


@pytest.mark.parametrize(
    "change",
    [
        {"command": "Review"},  # capitals
        {"command": "-review"},  # must start with a letter or digit
        {"command": "re view"},
        {"command": "/review"},
        {"command": "x" * 33},
        {"command": "리뷰"},
        {"command": ""},
        {"title": ""},
        {"title": "t" * 81},
        {"content": ""},
        {"content": "a\x00b"},
        {"content": "x" * 16_001},
        {"shared": "yes"},
        {"colour": "red"},
    ],
)
def test_bad_prompts_are_422_and_store_nothing(api, change):
    response = api.post("/prompts", {**REVIEW, **change})
    assert response.status_code == 422, change
    assert response.json()["error"]["message"]
    assert not Prompt.objects.exists()


def test_someone_elses_private_prompt_is_not_found_and_untouched(api, bob_api):
    mine = api.post("/prompts", REVIEW).json()
    assert bob_api.get(f"/prompts/{mine['id']}").status_code == 404
    assert bob_api.patch(f"/prompts/{mine['id']}", {"title": "Mine now"}).status_code == 404
    assert bob_api.delete(f"/prompts/{mine['id']}").status_code == 404
    assert bob_api.get("/prompts").json()["items"] == []
    assert api.get("/prompts/not-a-uuid").status_code == 404
    assert Prompt.objects.get().title == "Review my code"


def test_only_staff_share_and_a_shared_prompt_is_read_only_for_others(staff_api, bob_api):
    refused = bob_api.post("/prompts", {**REVIEW, "shared": True})
    assert refused.status_code == 422
    assert not Prompt.objects.exists()
    shared = staff_api.post("/prompts", {**REVIEW, "shared": True})
    assert shared.status_code == 201
    prompt = shared.json()
    seen = bob_api.get("/prompts").json()["items"]
    assert [(p["id"], p["owner_is_me"]) for p in seen] == [(prompt["id"], False)]
    assert bob_api.patch(f"/prompts/{prompt['id']}", {"content": "Be rude."}).status_code == 403
    assert bob_api.delete(f"/prompts/{prompt['id']}").status_code == 403
    own = bob_api.post("/prompts", {**REVIEW, "title": "Bob's"})  # the same command: his own
    assert own.status_code == 201
    listed = [p["title"] for p in bob_api.get("/prompts").json()["items"]]
    assert listed == ["Bob's", "Review my code"]  # his own first
    own_id = own.json()["id"]
    assert bob_api.patch(f"/prompts/{own_id}", {"shared": True}).status_code == 422
    actions = list(AuditEntry.objects.values_list("action", flat=True))
    assert actions == [AuditEntry.Action.PROMPT_PUBLISHED]
    assert staff_api.patch(f"/prompts/{prompt['id']}", {"shared": False}).status_code == 200
    assert bob_api.get("/prompts").json()["items"][0]["title"] == "Bob's"
    assert len(bob_api.get("/prompts").json()["items"]) == 1


def test_the_prompts_page_saves_edits_and_deletes(alice_client, alice):
    page = alice_client.get("/prompts/")
    assert page.status_code == 200 and b"new-prompt" in page.content
    bad = alice_client.post("/prompts/new/", {"command": "Bad Command", "title": "", "content": ""})
    assert bad.status_code == 400
    assert not Prompt.objects.exists()
    saved = alice_client.post(
        "/prompts/new/", {"command": "/weekly", "title": "Weekly report", "content": "{{team}}"}
    )
    assert saved.status_code == 302
    prompt = Prompt.objects.get()
    assert (prompt.command, prompt.owner_id) == ("weekly", alice.pk)  # a typed "/" is dropped
    assert b"/weekly" in alice_client.get("/prompts/").content
    clash = alice_client.post(
        "/prompts/new/", {"command": "weekly", "title": "Again", "content": "x"}
    )
    assert clash.status_code == 400 and "/weekly" in clash.content.decode()
    edited = alice_client.post(
        f"/prompts/{prompt.pk}/edit/", {"command": "weekly", "title": "주간 보고", "content": "x"}
    )
    assert edited.status_code == 302
    assert Prompt.objects.get().title == "주간 보고"
    assert alice_client.post(f"/prompts/{prompt.pk}/delete/").status_code == 302
    assert not Prompt.objects.exists()


def test_the_prompts_page_of_someone_elses_prompt_is_404(bob_client, alice):
    prompt = Prompt.objects.create(owner=alice, command="mine", title="Mine", content="x")
    assert bob_client.get(f"/prompts/{prompt.pk}/edit/").status_code == 404
    assert bob_client.post(f"/prompts/{prompt.pk}/delete/").status_code == 404
    assert Prompt.objects.filter(pk=prompt.pk).exists()


# --- a person's prompts as a file: exported, imported, in the data export --------------------
def test_prompts_export_and_import_into_another_account_once(api, bob_api, alice, bob):
    api.post("/prompts", REVIEW)
    api.post("/prompts", {"command": "busan", "title": "부산 여행", "content": "{{도시}} 일정"})
    exported = api.get("/prompts/export")
    assert exported.status_code == 200
    assert exported["Content-Disposition"] == 'attachment; filename="prompts.json"'
    data = exported.json()
    assert data["format"] == "chat-prompts" and data["version"] == 1
    assert [p["command"] for p in data["prompts"]] == ["busan", "review"]
    assert "부산 여행" in exported.content.decode()  # Korean as it is, not escaped
    bob_api.post("/prompts", {"command": "review", "title": "Bob's", "content": "his own"})
    first = bob_api.post("/prompts/import", data)
    assert first.status_code == 200, first.content
    assert first.json() == {"created": ["busan"], "skipped": ["review"]}
    theirs = {p.command: p for p in Prompt.objects.filter(owner=bob)}
    assert theirs["review"].content == "his own"  # never overwritten
    assert theirs["busan"].content == "{{도시}} 일정" and not theirs["busan"].shared
    again = bob_api.post("/prompts/import", data)
    assert again.json() == {"created": [], "skipped": ["busan", "review"]}
    assert Prompt.objects.filter(owner=bob).count() == 2


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"format": "chat-presets", "version": 1, "prompts": []},
        {"format": "chat-prompts", "version": 2, "prompts": []},
        {"format": "chat-prompts", "version": 1, "prompts": [{**REVIEW, "shared": True}]},
        {"format": "chat-prompts", "version": 1, "prompts": [{**REVIEW, "command": "Bad!"}]},
        {"format": "chat-prompts", "version": 1, "prompts": [{**REVIEW, "content": "a\x00b"}]},
        {"format": "chat-prompts", "version": 1, "prompts": [{**REVIEW, "content": "x" * 16_001}]},
        {"format": "chat-prompts", "version": 1, "prompts": [REVIEW] * 501},
        {"format": "chat-prompts", "version": 1, "prompts": [REVIEW, "review"]},
    ],
)
def test_a_file_that_is_not_a_prompts_file_is_refused_and_adds_nothing(api, alice, body):
    response = api.post("/prompts/import", body)
    assert response.status_code == 422, response.content
    assert not Prompt.objects.filter(owner=alice).exists()


def test_an_import_past_the_most_one_person_may_keep_adds_nothing(api, alice):
    Prompt.objects.bulk_create(
        Prompt(owner=alice, command=f"p{n}", title="t", content="c") for n in range(499)
    )
    two = [{**REVIEW, "command": "one"}, {**REVIEW, "command": "two"}]
    refused = api.post("/prompts/import", {"format": "chat-prompts", "version": 1, "prompts": two})
    assert refused.status_code == 422 and "500" in refused.json()["error"]["message"]
    assert Prompt.objects.filter(owner=alice).count() == 499
    one = {"format": "chat-prompts", "version": 1, "prompts": two[:1]}
    assert api.post("/prompts/import", one).json()["created"] == ["one"]
