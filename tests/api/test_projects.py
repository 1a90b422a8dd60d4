from __future__ import annotations

import pytest

from conversations.models import Conversation, Project

pytestmark = pytest.mark.django_db


def test_create_rename_list_and_delete_a_project(api):
    created = api.post("/projects", {"name": "  Work   stuff "})
    assert created.status_code == 201
    project = created.json()
    assert project["name"] == "Work stuff"
    conversation = api.post("/conversations", {"title": "Q3", "project_id": project["id"]}).json()
    renamed = api.patch(f"/projects/{project['id']}", {"name": "업무"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "업무"
    assert [p["name"] for p in api.get("/projects").json()["items"]] == ["업무"]
    assert api.delete(f"/projects/{project['id']}").status_code == 204
    assert not Project.objects.exists()
    assert Conversation.objects.get(pk=conversation["id"]).project_id is None


def test_duplicate_and_empty_names_are_refused(api):
    assert api.post("/projects", {"name": "Home"}).status_code == 201
    duplicate = api.post("/projects", {"name": "Home"})
    assert duplicate.status_code == 409
    assert duplicate.json()["error"]["code"] == "conflict"
    assert api.post("/projects", {"name": "   "}).status_code == 422
    assert api.post("/projects", {"name": "x" * 101}).status_code == 422
    assert Project.objects.count() == 1


def test_someone_elses_project_is_not_found(api, bob_api):
    project = api.post("/projects", {"name": "Private"}).json()
    assert bob_api.patch(f"/projects/{project['id']}", {"name": "Mine"}).status_code == 404
    assert bob_api.delete(f"/projects/{project['id']}").status_code == 404
    assert bob_api.get("/projects").json()["items"] == []
    assert Project.objects.get().name == "Private"
