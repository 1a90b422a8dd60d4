"""A question only an uploaded document answers: retrieval reaches the model and the reply."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from agent.checkpoint import close_checkpointers
from conversations import services
from conversations.realtime.hub import aclose_hub
from knowledge.services import upload_document
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, ToolCall, forced_tool, message_texts
from tests.support.turns import ask

pytestmark = pytest.mark.django_db(transaction=True)

HANDBOOK = """# Travel policy

## 4.1 Per diem
Employees travelling abroad receive a per diem of 87 euros for meals.

## 4.2 Booking
Flights are booked through the travel desk at least 14 days ahead.
"""


def route_rag_then_echo(body: dict) -> Reply:
    """Answer the router with "rag", and the agent with what its prompt says about per diem."""
    tool = forced_tool(body)
    if tool is not None:
        args = {
            name: ("rag" if "enum" in prop and "rag" in prop["enum"] else "documents")
            for name, prop in tool["function"]["parameters"]["properties"].items()
        }
        return Reply(tool_calls=[ToolCall(tool["function"]["name"], args)])
    system = " ".join(message_texts(body, "system"))
    return Reply(text="The per diem is 87 euros." if "87 euros" in system else "I don't know.")


@pytest.fixture
async def model(settings):
    with FakeOpenAI(route_rag_then_echo) as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        yield server
    await aclose_hub()
    await close_checkpointers()
    await sync_to_async(connections.close_all)()


async def test_document_passage_reaches_the_model_and_is_cited(model, alice, bob):
    await sync_to_async(upload_document)(
        user=alice, filename="travel.md", data=HANDBOOK.encode(), title="Travel handbook"
    )
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    reply, frames = await ask(alice, conversation, content="How much is the per diem abroad?")

    main = [b for b in model.requests if not forced_tool(b)]
    assert "87 euros" in json.dumps(main[-1], ensure_ascii=False)
    sources = [f for f in frames if f["type"] == "sources"]
    assert sources and sources[0]["items"][0]["document_title"] == "Travel handbook"
    references = [p for p in reply.parts if p["type"] == "references"]
    assert references and "4.1" in references[0]["items"][0]["section"]
    assert reply.content == "The per diem is 87 euros."


async def test_another_users_documents_are_never_retrieved(model, alice, bob):
    await sync_to_async(upload_document)(
        user=alice, filename="travel.md", data=HANDBOOK.encode(), title="Travel handbook"
    )
    conversation = await sync_to_async(services.create_conversation)(user=bob)
    reply, frames = await ask(bob, conversation, content="How much is the per diem abroad?")
    assert "87 euros" not in json.dumps(model.requests, ensure_ascii=False)
    assert not [f for f in frames if f["type"] == "sources" and f["items"]]
    assert not [p for p in reply.parts if p["type"] == "references"]


async def test_the_conversation_page_links_the_citation_to_the_passage(model, alice):
    from django.test import AsyncClient

    await sync_to_async(upload_document)(
        user=alice, filename="travel.md", data=HANDBOOK.encode(), title="Travel handbook"
    )
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    reply, _ = await ask(alice, conversation, content="How much is the per diem abroad?")
    url = next(p for p in reply.parts if p["type"] == "references")["items"][0]["url"]
    client = AsyncClient()
    await sync_to_async(client.force_login)(alice)
    page = (await client.get(f"/conversations/{conversation.id}/")).content.decode()
    assert f'href="{url}"' in page
    passage = (await client.get(url.split("#")[0])).content.decode()
    assert f'id="{url.split("#")[1]}"' in passage and "87 euros" in passage


async def test_a_question_in_the_documents_own_words_goes_to_them_without_the_router(model, alice):
    await sync_to_async(upload_document)(
        user=alice, filename="travel.md", data=HANDBOOK.encode(), title="Travel handbook"
    )
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    _reply, frames = await ask(alice, conversation, content="Per diem abroad for meals?")
    assert not [b for b in model.requests if forced_tool(b)]  # nobody asked the model
    assert "87 euros" in json.dumps(model.requests[-1], ensure_ascii=False)
    routes = [f for f in frames if f["type"] == "thinking" and f["step"] == "route"]
    assert [(f["code"], f["params"]) for f in routes] == [
        ("route.documents", {"by": "rule", "reason": "words_in_documents"})
    ]


def refuse_tools(body: dict) -> Reply:
    """A server without function calling (llama.cpp's without a tool parser, say)."""
    if body.get("tools"):
        return Reply(status=400, error_message="tools are not supported by this model")
    return route_rag_then_echo(body)


async def test_a_model_without_function_calling_gets_the_passage_by_retrievals_score(
    model, alice, monkeypatch
):
    from agent.nodes import route

    monkeypatch.setattr(route, "STRONG_OVERLAP", 1.01)  # only the score may decide here
    model.responder = refuse_tools
    await sync_to_async(upload_document)(
        user=alice, filename="travel.md", data=HANDBOOK.encode(), title="Travel handbook"
    )
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    reply, frames = await ask(alice, conversation, content="How much is the per diem abroad?")
    assert reply.content == "The per diem is 87 euros."
    routes = [f for f in frames if f["type"] == "thinking" and f["step"] == "route"]
    assert routes[0]["code"] == "route.documents"
    assert routes[0]["params"] == {"by": "score", "reason": "strong_evidence"}  # no vote asked

    # The model is now known not to call functions: the next turn asks no router at all.
    before = len(model.requests)
    reply, frames = await ask(alice, conversation, content="When must flights be booked?")
    later = model.requests[before:]
    assert len(later) == 1 and not later[0].get("tools")
    assert "14 days" in json.dumps(later[0], ensure_ascii=False)


async def test_an_everyday_question_the_router_cannot_decide_stays_out_of_the_documents(
    model, alice
):
    def unparseable_router(body: dict) -> Reply:
        if forced_tool(body):
            return Reply(text="I think maybe rag or agent, hard to say")  # no function call
        return route_rag_then_echo(body)

    model.responder = unparseable_router
    await sync_to_async(upload_document)(
        user=alice, filename="travel.md", data=HANDBOOK.encode(), title="Travel handbook"
    )
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    _reply, frames = await ask(alice, conversation, content="Write a haiku about autumn rain.")
    assert not [f for f in frames if f["type"] == "sources"]
    assert "87 euros" not in json.dumps(model.requests[-1], ensure_ascii=False)
    routes = [f for f in frames if f["type"] == "thinking" and f["step"] == "route"]
    assert routes[0]["code"] == "route.direct"
    assert routes[0]["params"] == {"by": "score", "reason": "router_undecided"}
