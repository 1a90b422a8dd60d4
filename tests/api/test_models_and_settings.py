"""GET /models, /me/settings, and a conversation's model, system prompt and temperature."""

from __future__ import annotations

import re

import pytest

from conversations.models import Conversation
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_models(settings):
    settings.OPENAI_API_KEY = "test-key"  # a real model is configured: CHAT_MODELS is offered
    settings.CHAT_MODEL = "fake-a"
    settings.CHAT_MODELS = "fake-b, fake-a ,fake-c"
    settings.CHAT_MODEL_CONTEXT = "fake-b=32000"
    settings.CHAT_VISION_MODELS = ["fake-c"]


def test_models_lists_the_choices_default_first_with_windows_and_vision(api, two_models):
    response = api.get("/models")
    assert response.status_code == 200
    items = response.json()["items"]
    assert all(item.pop("label") == item["id"] for item in items)  # a real model: its id
    assert items == [
        {"id": "fake-a", "default": True, "context_window": 128000, "vision": False},
        {"id": "fake-b", "default": False, "context_window": 32000, "vision": False},
        {"id": "fake-c", "default": False, "context_window": 128000, "vision": True},
    ]


def test_offline_the_built_in_model_is_the_one_on_offer(api, settings):
    settings.OPENAI_API_KEY = None
    settings.CHAT_MODEL = "gpt-4o-mini"
    settings.CHAT_MODELS = "gpt-4o-mini,gpt-4o"
    [offline] = api.get("/models").json()["items"]
    assert offline["id"] == "offline" and offline["default"] is True
    assert offline["label"] == "Built-in offline model"
    assert api.patch("/me/settings", {"default_model": "gpt-4o"}).status_code == 422


def test_offline_the_settings_page_names_the_offline_model(client, alice, settings):
    settings.OPENAI_API_KEY = None
    settings.CHAT_MODEL = "gpt-4o-mini"
    client.force_login(alice)
    page = client.get("/settings/", headers={"accept-language": "en"}).content.decode()
    assert re.search(r'<option value="offline"[^>]*>\s*Built-in offline model\s*<', page)
    assert "gpt-4o-mini" not in page
    korean = client.get("/settings/", headers={"accept-language": "ko"}).content.decode()
    assert re.search(r'<option value="offline"[^>]*>\s*내장 오프라인 모델\s*<', korean)


def test_auto_lists_what_the_model_server_serves(api, settings):
    with FakeOpenAI(models=["served-1", "served-2"]) as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        settings.CHAT_MODEL = "served-2"
        settings.CHAT_MODELS = "auto"
        ids = [m["id"] for m in api.get("/models").json()["items"]]
    assert ids == ["served-2", "served-1"]


def test_auto_with_the_server_down_offers_the_default_alone(api, settings):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"  # nothing listens there
    settings.CHAT_MODEL = "fallback"
    settings.CHAT_MODELS = "auto"
    response = api.get("/models")
    assert response.status_code == 200
    assert [m["id"] for m in response.json()["items"]] == ["fallback"]


def test_models_needs_a_login(client):
    assert client.get("/api/v1/models").status_code == 401


def test_a_conversation_takes_a_model_system_prompt_and_temperature(api, two_models):
    created = api.post(
        "/conversations", {"model": "fake-b", "system_prompt": "Be brief.", "temperature": 0.2}
    ).json()
    assert (created["model"], created["system_prompt"], created["temperature"]) == (
        "fake-b",
        "Be brief.",
        0.2,
    )
    path = f"/conversations/{created['id']}"
    changed = api.patch(path, {"model": "fake-c", "temperature": None}).json()
    assert (changed["model"], changed["system_prompt"], changed["temperature"]) == (
        "fake-c",
        "Be brief.",
        None,
    )
    assert api.patch(path, {"model": ""}).json()["model"] == ""  # back to the default


@pytest.mark.parametrize(
    "change",
    [
        {"model": "gpt-99"},
        {"model": "x" * 101},
        {"system_prompt": "x" * 8001},
        {"system_prompt": "nul \x00 byte"},
        {"temperature": 2.5},
        {"temperature": -0.1},
        {"temperature": "hot"},
        {"temperature": True},
    ],
)
def test_a_bad_model_setting_is_refused_and_changes_nothing(api, two_models, change):
    created = api.post("/conversations", {"model": "fake-b", "system_prompt": "Be brief."}).json()
    response = api.patch(f"/conversations/{created['id']}", change)
    assert response.status_code in (400, 422)
    assert "error" in response.json()
    row = Conversation.objects.get(pk=created["id"])
    assert (row.model, row.system_prompt, row.temperature) == ("fake-b", "Be brief.", None)


def test_an_unknown_model_at_creation_creates_nothing(api, two_models):
    response = api.post("/conversations", {"model": "gpt-99"})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid"
    assert not Conversation.objects.exists()


def test_a_huge_temperature_in_json_is_refused(api, two_models):
    created = api.post("/conversations", {}).json()
    raw = '{"temperature": 1e999}'
    response = api.client.patch(
        f"/api/v1/conversations/{created['id']}",
        data=raw,
        content_type="application/json",
        headers=api.headers,
    )
    assert response.status_code in (400, 422)


def test_settings_round_trip_and_stay_the_users_own(api, bob_api, two_models):
    assert api.get("/me/settings").json() == {
        "default_model": "",
        "custom_instructions": "",
        "memory_enabled": True,
        "tools_enabled": [],  # no search provider, no sandbox: nothing on by default
        "theme": "system",
        "stt": False,
        "tts": False,
    }
    changed = api.patch(
        "/me/settings",
        {"default_model": "fake-c", "custom_instructions": "I am a nurse.", "theme": "dark"},
    )
    assert changed.status_code == 200
    assert api.get("/me/settings").json() == {
        "default_model": "fake-c",
        "custom_instructions": "I am a nurse.",
        "memory_enabled": True,
        "tools_enabled": [],  # no search provider, no sandbox: nothing on by default
        "theme": "dark",
        "stt": False,
        "tts": False,
    }
    assert bob_api.get("/me/settings").json() == {
        "default_model": "",
        "custom_instructions": "",
        "memory_enabled": True,
        "tools_enabled": [],  # no search provider, no sandbox: nothing on by default
        "theme": "system",
        "stt": False,
        "tts": False,
    }


@pytest.mark.parametrize(
    "change",
    [
        {"default_model": "gpt-99"},
        {"custom_instructions": "x" * 8001},
        {"custom_instructions": "\ud800"},
        {"unknown": 1},
        {"theme": "purple"},
    ],
)
def test_bad_settings_are_refused_and_change_nothing(api, two_models, change):
    api.patch("/me/settings", {"default_model": "fake-b", "custom_instructions": "Hi."})
    response = api.patch("/me/settings", change)
    assert response.status_code in (400, 422)
    assert api.get("/me/settings").json() == {
        "default_model": "fake-b",
        "custom_instructions": "Hi.",
        "memory_enabled": True,
        "tools_enabled": [],  # no search provider, no sandbox: nothing on by default
        "theme": "system",
        "stt": False,
        "tts": False,
    }


def test_the_json_export_carries_the_instructions_and_import_restores_them(api, two_models):
    created = api.post(
        "/conversations", {"model": "fake-b", "system_prompt": "Be brief.", "temperature": 1.5}
    ).json()
    exported = api.get(f"/conversations/{created['id']}/export", format="json")
    raw = b"".join(exported)  # an async stream, read the way a sync server would
    imported = api.post_raw("/conversations/import", raw).json()
    assert (imported["model"], imported["system_prompt"], imported["temperature"]) == (
        "fake-b",
        "Be brief.",
        1.5,
    )


def test_a_fork_keeps_the_model_and_instructions(api, two_models, alice):
    from conversations import services

    conversation = services.create_conversation(
        user=alice, model="fake-b", system_prompt="Be brief.", temperature=0.7
    )
    message = services.insert_message(
        conversation, services.NewMessage(role="user", content="hi", created_by=alice)
    )
    fork = api.post(f"/conversations/{conversation.pk}/fork", {"from_message_id": str(message.pk)})
    assert fork.status_code == 201
    body = fork.json()
    assert (body["model"], body["system_prompt"], body["temperature"]) == (
        "fake-b",
        "Be brief.",
        0.7,
    )
