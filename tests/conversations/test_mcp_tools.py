"""MCP servers' tools in a real turn: the fake OpenAI server calls them through the real
agent, against real MCP servers (streamable HTTP and stdio) started here. A server that
dies, stalls or floods gives a step that says so, and the reply still completes."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from conversations import services
from conversations.models import Message
from tests.support.mcp_fixtures import http_server, register_http, register_stdio
from tests.support.openai_replies import forced_tool
from tests.support.turns import ask, calling, told
from toolbox import servers

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
async def mcp_servers(settings):
    """alpha over streamable HTTP, beta over stdio; both listed, as staff would refresh."""
    settings.CHAT_MCP_TIMEOUT = 5
    with http_server("alpha") as (url, proc):
        alpha = await sync_to_async(register_http)("alpha", url)
        beta = await sync_to_async(register_stdio)("beta")
        for server in (alpha, beta):
            await servers.arefresh(server)
        yield proc


async def conversation_with(alice, *tools: str):
    conversation = await sync_to_async(services.create_conversation)(user=alice, title="Tools")
    await sync_to_async(services.update_conversation)(conversation=conversation, tools=list(tools))
    return conversation


def offered(model) -> set[str]:
    main = [b for b in model.requests if b.get("tools") and forced_tool(b) is None]
    return {t["function"]["name"] for t in main[-1]["tools"]}


def steps(frames, kind: str) -> list[dict]:
    return [f for f in frames if f["type"] == "thinking" and f["step"] == kind]


async def test_the_reply_uses_a_servers_tool_and_the_steps_name_it(model, alice, mcp_servers):
    conversation = await conversation_with(alice, "mcp:alpha:lookup", "mcp:beta:lookup")
    model.responder = calling("alpha__lookup", {"key": "vault"})
    reply, frames = await ask(alice, conversation, content="What is the vault code?")
    assert "7-alpha" in reply.content and reply.finish_reason == "end_turn"
    # Same-named tools of two servers reach the model under two names.
    assert {"alpha__lookup", "beta__lookup"} <= offered(model)
    [call] = steps(frames, "tool_call")
    assert call["code"] == "tool.mcp.call" and call["content"] == "Using lookup on alpha"
    assert call["params"]["server"] == "alpha" and call["params"]["tool"] == "lookup"
    [done] = steps(frames, "tool_result")
    assert done["code"] == "tool.mcp.done"
    stored = [p for p in reply.parts if p["type"] == "tool_result"]
    assert stored and not stored[0]["is_error"]
    # The ledger lists messages a person can open, not the turn's tool exchange.
    rows = {str(pk) async for pk in Message.objects.values_list("pk", flat=True)}
    assert reply.metadata["context"]["message_ids"]
    assert set(reply.metadata["context"]["message_ids"]) <= rows


async def test_a_stdio_servers_tool_answers(model, alice, mcp_servers):
    conversation = await conversation_with(alice, "mcp:beta:lookup")
    model.responder = calling("beta__lookup", {"key": "door"})
    reply, _frames = await ask(alice, conversation, content="And the door code?")
    assert "7-beta" in reply.content


async def test_a_server_killed_mid_call_gives_a_step_and_the_reply_goes_on(
    model, alice, mcp_servers
):
    conversation = await conversation_with(alice, "mcp:alpha:die", "mcp:alpha:lookup")
    model.responder = calling("alpha__die", {})
    reply, frames = await ask(alice, conversation, content="Stop the server.")
    assert reply.finish_reason == "end_turn"
    [failure] = steps(frames, "tool_result")
    assert failure["code"] in {"tool.unreachable", "tool.mcp.failed"}
    assert "alpha" in failure["content"]
    assert told(model).startswith("Error: ")
    assert mcp_servers.wait(10) is not None  # the server really died
    assert await Message.objects.filter(conversation=conversation).acount() == 2  # once


async def test_a_tool_past_the_timeout_is_stopped(model, alice, mcp_servers, settings):
    settings.CHAT_MCP_TIMEOUT = 1
    conversation = await conversation_with(alice, "mcp:alpha:sleepy")
    model.responder = calling("alpha__sleepy", {"seconds": 30})
    reply, frames = await ask(alice, conversation, content="Wait for it.")
    assert reply.finish_reason == "end_turn"
    [failure] = steps(frames, "tool_result")
    assert failure["code"] == "tool.timeout"
    assert failure["content"] == "sleepy took too long and was stopped"


async def test_five_megabytes_reach_the_model_cut_short(model, alice, mcp_servers):
    conversation = await conversation_with(alice, "mcp:alpha:huge")
    model.responder = calling("alpha__huge", {})
    reply, _frames = await ask(alice, conversation, content="Give me everything.")
    assert reply.finish_reason == "end_turn"
    assert 1000 < len(told(model)) <= 4000
    assert len(json.dumps(reply.parts)) < 20_000  # nor is it stored whole


async def test_a_malformed_tool_is_not_offered_and_the_others_are(model, alice, mcp_servers):
    conversation = await conversation_with(alice, "mcp:alpha:add")
    model.responder = calling("alpha__add", {"a": 2, "b": 40})
    reply, _frames = await ask(alice, conversation, content="Add 2 and 40.")
    assert "42" in reply.content
    assert "alpha__broken" not in offered(model)
