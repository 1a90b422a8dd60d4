"""SPEC: Tools. `GET /tools` lists the built-ins and each MCP server's tools (real servers,
streamable HTTP and stdio, started here); a user and a conversation switch them on."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from accounts.preferences import get_user_settings
from conversations.models import Conversation
from tests.support.fake_openai import FakeOpenAI
from tests.support.mcp_fixtures import http_server, register_http, register_stdio
from toolbox import servers
from toolbox.models import McpServer

from .conftest import make_conversation

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def alpha():
    """An MCP server over streamable HTTP, registered by staff."""
    with http_server("alpha") as (url, _proc):
        yield register_http("alpha", url)


def ids(response) -> set[str]:
    assert response.status_code == 200, response.content
    return {item["id"] for item in response.json()["items"]}


def test_the_servers_tools_are_listed_by_id_and_off_until_switched_on(api, alpha):
    register_stdio("beta")
    items = api.get("/tools").json()["items"]
    listed = {item["id"]: item for item in items}
    # Both servers offer `lookup`: two ids, each naming its server.
    assert {"mcp:alpha:lookup", "mcp:beta:lookup", "mcp:alpha:add", "read_url"} <= set(listed)
    assert listed["mcp:beta:lookup"]["server"] == "beta"
    assert listed["mcp:alpha:lookup"]["description"] == "Look up the code stored under a key."
    assert not listed["mcp:alpha:lookup"]["enabled"]
    # The tool with a malformed schema is left out, and staff can read why.
    assert "mcp:alpha:broken" not in listed
    assert "broken" in McpServer.objects.get(name="alpha").error


def test_a_server_that_is_down_lists_nothing_and_the_rest_still_answer(api, alpha):
    McpServer.objects.create(name="gone", url="http://127.0.0.1:9/mcp")
    listed = ids(api.get("/tools"))
    assert "mcp:alpha:lookup" in listed
    assert not any(i.startswith("mcp:gone:") for i in listed)
    assert McpServer.objects.get(name="gone").error


def test_a_server_that_answers_garbage_lists_nothing(api, alpha):
    with FakeOpenAI() as not_mcp:  # an HTTP server that speaks something else
        McpServer.objects.create(name="junk", url=not_mcp.base_url)
        listed = ids(api.get("/tools"))
    assert "mcp:alpha:lookup" in listed
    assert not any(i.startswith("mcp:junk:") for i in listed)
    assert McpServer.objects.get(name="junk").error


def test_servers_from_settings_are_kept_in_step(api, settings):
    with http_server("gamma") as (url, _proc):
        settings.CHAT_MCP_SERVERS = [{"name": "gamma", "url": url}]
        servers.forget_sync()
        assert "mcp:gamma:lookup" in ids(api.get("/tools"))
        assert McpServer.objects.get(name="gamma").source == "settings"
        settings.CHAT_MCP_SERVERS = []
        servers.forget_sync()
        assert not any(i.startswith("mcp:gamma:") for i in ids(api.get("/tools")))
    servers.forget_sync()


def test_a_user_switches_tools_on_by_default_and_a_bad_id_changes_nothing(api, alice, alpha):
    api.get("/tools")  # lists alpha's tools
    response = api.patch("/me/settings", {"tools_enabled": ["mcp:alpha:lookup"]})
    assert response.status_code == 200, response.content
    assert response.json()["tools_enabled"] == ["mcp:alpha:lookup"]
    on = {i["id"] for i in api.get("/tools").json()["items"] if i["enabled"]}
    assert on == {"mcp:alpha:lookup"}
    for bad in (["mcp:alpha:nope"], ["mcp:nobody:lookup"], [""], ["x" * 300], "lookup"):
        response = api.patch("/me/settings", {"tools_enabled": bad})
        assert response.status_code == 422, bad
    assert get_user_settings(user=alice).tools_enabled == ["mcp:alpha:lookup"]


def test_a_conversation_has_its_own_tools_and_null_means_the_default(api, alice, alpha):
    api.get("/tools")
    conversation = make_conversation(alice)
    assert api.get(f"/conversations/{conversation.id}").json()["tools"] is None
    path = f"/conversations/{conversation.id}"
    response = api.patch(path, {"tools": ["mcp:alpha:add", "mcp:alpha:add"]})
    assert response.status_code == 200, response.content
    assert response.json()["tools"] == ["mcp:alpha:add"]
    assert api.patch(path, {"tools": ["python"]}).status_code == 422  # the sandbox is off
    assert Conversation.objects.get(pk=conversation.pk).tools == ["mcp:alpha:add"]
    assert api.patch(path, {"tools": None}).json()["tools"] is None


def test_a_conversations_tools_survive_export_and_import(api, bob_api, alice, alpha):
    api.get("/tools")
    conversation = make_conversation(alice, contents=["hi", "hello"])
    api.patch(f"/conversations/{conversation.id}", {"tools": ["mcp:alpha:lookup"]})
    exported = api.get(f"/conversations/{conversation.id}/export", format="json")
    response = bob_api.post_raw("/conversations/import", b"".join(exported))
    assert response.status_code == 201, response.content
    assert response.json()["tools"] == ["mcp:alpha:lookup"]


def test_staff_refresh_lists_again(alpha):
    server = async_to_sync(servers.arefresh)(alpha)
    assert {t["name"] for t in server.tools} >= {"lookup", "add", "sleepy", "huge", "die"}
    assert McpServer.objects.get(pk=alpha.pk).refreshed_at is not None
