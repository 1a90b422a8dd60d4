"""`/api/v1/memories` and the memory switch in `/me/settings`: CRUD, edges, ownership."""

from __future__ import annotations

import uuid

import pytest

pytestmark = pytest.mark.django_db


def test_a_memory_is_added_listed_edited_and_deleted(api):
    created = api.post("/memories", {"text": "I am vegetarian."})
    assert created.status_code == 201
    memory = created.json()
    assert memory["text"] == "I am vegetarian."
    assert memory["created_by"] == "user"
    assert api.get("/memories").json()["items"] == [memory]
    edited = api.patch(f"/memories/{memory['id']}", {"text": "I am vegan."})
    assert edited.status_code == 200
    assert api.get(f"/memories/{memory['id']}").json()["text"] == "I am vegan."
    assert api.delete(f"/memories/{memory['id']}").status_code == 204
    assert api.get("/memories").json()["items"] == []
    assert api.get(f"/memories/{memory['id']}").status_code == 404


def test_the_same_text_twice_is_one_memory(api):
    first = api.post("/memories", {"text": "I live in Busan."}).json()
    second = api.post("/memories", {"text": "i live in busan."}).json()
    assert first["id"] == second["id"]
    assert len(api.get("/memories").json()["items"]) == 1


@pytest.mark.parametrize(
    "text",
    ["", "   ", "a\x00b", "x" * 501, "x" * 10_000_000, 42, None, ["a"]],
    ids=["empty", "blank", "nul", "501", "10MB", "number", "null", "list"],
)
def test_a_memory_that_cannot_be_one_is_refused_and_nothing_is_saved(api, text):
    response = api.post("/memories", {"text": text})
    assert response.status_code in (400, 413, 422)
    assert "error" in response.json()
    assert api.get("/memories").json()["items"] == []


def test_someone_elses_memory_is_not_found_and_unchanged(api, bob_api):
    mine = api.post("/memories", {"text": "My locker is 4412."}).json()
    path = f"/memories/{mine['id']}"
    assert bob_api.get(path).status_code == 404
    assert bob_api.patch(path, {"text": "hacked"}).status_code == 404
    assert bob_api.delete(path).status_code == 404
    assert bob_api.get("/memories").json()["items"] == []
    assert api.get(path).json()["text"] == "My locker is 4412."


@pytest.mark.parametrize(
    "memory_id", ["nope", "1", "x" * 5000, str(uuid.uuid4())], ids=["word", "digit", "long", "uuid"]
)
def test_a_malformed_or_unknown_id_is_not_found(api, memory_id):
    assert api.get(f"/memories/{memory_id}").status_code == 404
    assert api.delete(f"/memories/{memory_id}").status_code == 404


def test_memory_can_be_switched_off_and_on(api):
    assert api.get("/me/settings").json()["memory_enabled"] is True
    off = api.patch("/me/settings", {"memory_enabled": False})
    assert off.status_code == 200
    assert off.json()["memory_enabled"] is False
    assert api.patch("/me/settings", {"memory_enabled": "no"}).status_code == 422
    assert api.get("/me/settings").json()["memory_enabled"] is False


def test_the_memory_page_adds_and_deletes(alice_client):
    page = alice_client.post("/settings/memory/", {"action": "add", "text": "I like tea."})
    assert page.status_code == 302
    listed = alice_client.get("/settings/memory/")
    assert "I like tea." in listed.content.decode()
    refused = alice_client.post("/settings/memory/", {"action": "add", "text": "x" * 501})
    assert refused.status_code == 400
