"""GET/POST /presets, GET/PATCH/DELETE /presets/{id}: yours, shared ones, and refusals."""

from __future__ import annotations

import uuid

import pytest

from audit.models import AuditEntry
from conversations.models import Conversation
from knowledge.models import Document
from presets.models import Preset
from tests.api.conftest import ApiClient

pytestmark = pytest.mark.django_db

TUTOR = {
    "name": "Korean tutor",
    "icon": "🇰🇷",
    "instructions": "Answer in simple Korean, then give the English.",
    "temperature": 0.4,
    "starters": ["Teach me a greeting", "Correct my sentence"],
}


@pytest.fixture
def staff_api(alice, client) -> ApiClient:
    alice.is_staff = True
    alice.save(update_fields=["is_staff"])
    from accounts.tokens import create_api_token

    return ApiClient(client, create_api_token(user=alice, name="staff").secret)


def test_a_preset_is_created_listed_read_changed_and_deleted(api):
    created = api.post("/presets", TUTOR)
    assert created.status_code == 201
    body = created.json()
    assert body["name"] == "Korean tutor" and body["icon"] == "🇰🇷"
    assert body["starters"] == TUTOR["starters"]
    assert body["knowledge"] == {"scope": "all", "ids": []}
    assert body["owner_is_me"] is True and body["shared"] is False
    assert body["tools"] is None and body["model"] == ""

    listed = api.get("/presets").json()
    assert [p["id"] for p in listed["items"]] == [body["id"]]
    assert api.get(f"/presets/{body['id']}").json()["instructions"] == TUTOR["instructions"]

    changed = api.patch(f"/presets/{body['id']}", {"name": "Tutor", "temperature": None})
    assert changed.status_code == 200
    assert (changed.json()["name"], changed.json()["temperature"]) == ("Tutor", None)
    assert changed.json()["starters"] == TUTOR["starters"]  # untouched fields stay

    assert api.delete(f"/presets/{body['id']}").status_code == 204
    assert api.get(f"/presets/{body['id']}").status_code == 404
    assert not Preset.objects.exists()


def test_another_users_private_preset_is_not_found(api, bob_api):
    mine = api.post("/presets", TUTOR).json()
    assert bob_api.get(f"/presets/{mine['id']}").status_code == 404
    assert bob_api.patch(f"/presets/{mine['id']}", {"name": "Mine now"}).status_code == 404
    assert bob_api.delete(f"/presets/{mine['id']}").status_code == 404
    assert bob_api.get("/presets").json()["items"] == []
    started = bob_api.post("/conversations", {"preset_id": mine["id"]})
    assert started.status_code == 404
    assert not Conversation.objects.exists()
    assert Preset.objects.get().name == "Korean tutor"


def test_a_published_preset_is_seen_by_everyone_but_changed_only_by_its_owner(
    staff_api, bob_api, alice
):
    shared = staff_api.post("/presets", {**TUTOR, "shared": True})
    assert shared.status_code == 201
    preset = shared.json()
    seen = bob_api.get("/presets").json()["items"]
    assert [(p["id"], p["owner_is_me"], p["shared"]) for p in seen] == [(preset["id"], False, True)]
    refused = bob_api.patch(f"/presets/{preset['id']}", {"instructions": "Be rude."})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "forbidden"
    assert bob_api.delete(f"/presets/{preset['id']}").status_code == 403
    assert Preset.objects.get().instructions == TUTOR["instructions"]
    # Bob can start a chat from it.
    started = bob_api.post("/conversations", {"preset_id": preset["id"]})
    assert started.status_code == 201 and started.json()["preset_id"] == preset["id"]
    # Publishing was written to the audit log, with who and what.
    entry = AuditEntry.objects.get(action=AuditEntry.Action.PRESET_PUBLISHED)
    assert (entry.actor_id, entry.target_id) == (alice.pk, preset["id"])


def test_only_staff_may_share_a_preset(api):
    refused = api.post("/presets", {**TUTOR, "shared": True})
    assert refused.status_code == 422
    assert "staff" in refused.json()["error"]["message"]
    mine = api.post("/presets", TUTOR).json()
    assert api.patch(f"/presets/{mine['id']}", {"shared": True}).status_code == 422
    assert not Preset.objects.filter(shared=True).exists()
    assert not AuditEntry.objects.exists()


def test_unpublishing_and_deleting_a_shared_preset_are_audited(staff_api, bob_api):
    preset = staff_api.post("/presets", {**TUTOR, "shared": True}).json()
    conversation = bob_api.post("/conversations", {"preset_id": preset["id"]}).json()
    assert staff_api.patch(f"/presets/{preset['id']}", {"shared": False}).status_code == 200
    assert bob_api.get(f"/presets/{preset['id']}").status_code == 404
    assert staff_api.patch(f"/presets/{preset['id']}", {"shared": True}).status_code == 200
    assert staff_api.delete(f"/presets/{preset['id']}").status_code == 204
    actions = list(AuditEntry.objects.order_by("id").values_list("action", flat=True))
    published, unpublished = "preset.published", "preset.unpublished"
    assert actions == [published, unpublished, published, unpublished]
    # Bob's conversation outlives the preset, unlinked (by the database: his row is not
    # the deleting user's to see).
    after = bob_api.get(f"/conversations/{conversation['id']}")
    assert after.status_code == 200 and after.json()["preset_id"] is None


def test_bad_presets_are_refused_and_nothing_is_stored(api, bob, settings):
    bobs_document = Document.objects.create(owner=bob, title="Bob's", text="secret")
    bad = [
        {**TUTOR, "name": ""},
        {**TUTOR, "name": "x" * 81},
        {**TUTOR, "name": "nul\x00"},
        {**TUTOR, "instructions": "x" * 8001},
        {**TUTOR, "temperature": 2.5},
        {**TUTOR, "starters": ["one"] * 7},
        {**TUTOR, "starters": [""]},
        {**TUTOR, "model": "no-such-model"},
        {**TUTOR, "tools": ["no_such_tool"]},
        {**TUTOR, "knowledge": {"scope": "all", "ids": [str(uuid.uuid4())]}},
        {**TUTOR, "knowledge": {"scope": "documents", "ids": []}},
        {**TUTOR, "knowledge": {"scope": "documents", "ids": [str(bobs_document.pk)]}},
        {**TUTOR, "knowledge": {"scope": "project", "ids": [999999]}},
        {**TUTOR, "knowledge": {"scope": "shelf"}},
        {**TUTOR, "surprise": 1},
    ]
    for body in bad:
        response = api.post("/presets", body)
        assert response.status_code == 422, body
        assert response.json()["error"]["code"], body
    assert not Preset.objects.exists()
    assert api.get("/presets/not-a-uuid").status_code == 404
    assert api.patch(f"/presets/{uuid.uuid4()}", {"name": "x"}).status_code == 404


def test_a_preset_cannot_name_null_for_a_required_field(api):
    preset = api.post("/presets", TUTOR).json()
    for field in ("name", "instructions", "starters", "knowledge", "shared"):
        assert api.patch(f"/presets/{preset['id']}", {field: None}).status_code == 422, field
    assert Preset.objects.get().name == "Korean tutor"


def test_knowledge_can_name_my_documents_or_one_of_my_projects(api, alice):
    document = Document.objects.create(owner=alice, title="Handbook", text="Leave: 20 days")
    project = api.post("/projects", {"name": "Thesis"}).json()
    chosen = api.post(
        "/presets", {**TUTOR, "knowledge": {"scope": "documents", "ids": [str(document.pk)]}}
    )
    assert chosen.status_code == 201
    assert chosen.json()["knowledge"] == {"scope": "documents", "ids": [str(document.pk)]}
    in_project = api.post(
        "/presets", {**TUTOR, "knowledge": {"scope": "project", "ids": [project["id"]]}}
    )
    assert in_project.status_code == 201
    assert in_project.json()["knowledge"] == {"scope": "project", "ids": [project["id"]]}


def test_a_shared_preset_searches_everyones_own_documents(staff_api, alice):
    document = Document.objects.create(owner=alice, title="Handbook", text="Leave: 20 days")
    refused = staff_api.post(
        "/presets",
        {**TUTOR, "shared": True, "knowledge": {"scope": "documents", "ids": [str(document.pk)]}},
    )
    assert refused.status_code == 422
    assert not Preset.objects.exists()


def test_a_fork_stays_with_its_preset(api, alice):
    from conversations import services

    preset = api.post("/presets", TUTOR).json()
    conversation = services.create_conversation(user=alice, preset=preset["id"])
    message = services.insert_message(
        conversation, services.NewMessage(role="user", content="hi", created_by=alice)
    )
    fork = api.post(f"/conversations/{conversation.pk}/fork", {"from_message_id": str(message.pk)})
    assert fork.status_code == 201
    assert fork.json()["preset_id"] == preset["id"]


def test_staff_share_and_withdraw_presets_in_the_admin_and_it_is_audited(make_user, alice, bob):
    from django.test import Client

    moderator = make_user("moderator", is_staff=True, is_superuser=True)
    staff = Client()
    staff.force_login(moderator)
    tutor = Preset.objects.create(owner=alice, name="Tutor")
    own_files = Preset.objects.create(
        owner=bob, name="Bob's files", knowledge_scope="documents", knowledge_ids=["x"]
    )
    changelist = "/admin/presets/preset/"
    assert staff.get(changelist).status_code == 200
    staff.post(
        changelist,
        {"action": "publish", "_selected_action": [str(tutor.pk), str(own_files.pk)]},
    )
    tutor.refresh_from_db()
    own_files.refresh_from_db()
    assert tutor.shared and not own_files.shared  # a preset of its owner's files is refused
    staff.post(changelist, {"action": "withdraw", "_selected_action": [str(tutor.pk)]})
    tutor.refresh_from_db()
    assert not tutor.shared
    entries = AuditEntry.objects.order_by("id")
    assert [(e.action, e.actor_name, e.target_id) for e in entries] == [
        ("preset.published", "moderator", str(tutor.pk)),
        ("preset.unpublished", "moderator", str(tutor.pk)),
    ]


def test_editing_a_preset_on_its_page_keeps_a_model_no_longer_offered(client, alice, settings):
    settings.OPENAI_API_KEY = "test-key"
    settings.CHAT_MODEL = "m1"
    settings.CHAT_MODELS = "m1,m2"
    preset = Preset.objects.create(owner=alice, name="Tutor", model="m2")
    settings.CHAT_MODELS = "m1"  # m2 taken off the menu since
    client.force_login(alice)
    page = client.get(f"/presets/{preset.pk}/edit/").content.decode()
    assert 'value="m2" selected' in page and "no longer offered" in page
    form = {"name": "Tutor, renamed", "model": "m2", "knowledge_scope": "all"}
    assert client.post(f"/presets/{preset.pk}/edit/", form).status_code == 302
    preset.refresh_from_db()
    assert (preset.name, preset.model) == ("Tutor, renamed", "m2")
    # Choosing it again is judged: an unknown model is refused and nothing changes.
    refused = client.post(
        f"/presets/{preset.pk}/edit/", {"name": "Other", "model": "m3", "knowledge_scope": "all"}
    )
    assert refused.status_code == 400
    preset.refresh_from_db()
    assert preset.name == "Tutor, renamed"


def test_the_admin_cannot_rewrite_a_preset_around_its_rules(make_user, bob):
    from django.test import Client

    staff = Client()
    staff.force_login(make_user("moderator", is_staff=True, is_superuser=True))
    preset = Preset.objects.create(owner=bob, name="Shared", shared=True)
    staff.post(
        f"/admin/presets/preset/{preset.pk}/change/",
        {"name": "X", "tools": "5", "starters": '[1, {"x": null}]', "temperature": "99"},
    )
    preset.refresh_from_db()
    assert (preset.name, preset.tools, preset.starters, preset.temperature) == (
        "Shared",
        None,
        [],
        None,
    )
