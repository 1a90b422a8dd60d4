"""What a reply cites: numbered per document, linked from the text, one source per document,
and nothing cited that retrieval found on no real evidence."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import AsyncClient

from agent.checkpoint import close_checkpointers
from conversations import services
from conversations.realtime.hub import aclose_hub
from core import rls
from knowledge import hybrid
from knowledge.services import upload_document
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, ToolCall, forced_tool, message_texts
from tests.support.turns import ask

pytestmark = pytest.mark.django_db(transaction=True)

TRAVEL = """# Travel policy

## 4.1 Per diem
Employees travelling abroad receive a per diem of 87 euros for meals.

## 4.2 Booking
Flights are booked through the travel desk at least 14 days ahead.
"""
LEAVE = """# Leave policy

## 2.1 Annual leave
Every employee has 25 days of annual leave a year, and the per diem rules do not apply.
"""
HEADING = re.compile(r"^\[(\d+)\] (.+?) — ", re.M)


def route_rag_then_cite(body: dict) -> Reply:
    """Vote "rag"; answer with each document's number as the prompt gave it."""
    tool = forced_tool(body)
    if tool is not None:
        args = {
            name: ("rag" if "enum" in prop and "rag" in prop["enum"] else "documents")
            for name, prop in tool["function"]["parameters"]["properties"].items()
        }
        return Reply(tool_calls=[ToolCall(tool["function"]["name"], args)])
    numbers = dict((title, n) for n, title in HEADING.findall(" ".join(message_texts(body))))
    cited = " ".join(f"{title} says so [{n}]." for title, n in numbers.items())
    return Reply(text=cited or "Nothing in your documents.")


@pytest.fixture
async def model(settings):
    with FakeOpenAI(route_rag_then_cite) as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        yield server
    await aclose_hub()
    await close_checkpointers()
    await sync_to_async(connections.close_all)()


def system_prompt(model) -> str:
    return " ".join(message_texts(model.requests[-1], "system"))


async def page_of(user, conversation) -> str:
    client = AsyncClient()
    await sync_to_async(client.force_login)(user)
    return (await client.get(f"/conversations/{conversation.id}/")).content.decode()


async def test_each_document_has_one_number_and_the_replys_numbers_link_to_its_passage(
    model, alice
):
    upload = sync_to_async(upload_document)
    await upload(user=alice, filename="travel.md", data=TRAVEL.encode(), title="Travel handbook")
    await upload(user=alice, filename="leave.md", data=LEAVE.encode(), title="Leave policy")
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    reply, frames = await ask(
        alice, conversation, content="What is the per diem for meals, and how is travel booked?"
    )

    # The model read every passage under its document's number: two of the handbook's, one.
    headings = HEADING.findall(system_prompt(model))
    numbers = {title: {n for n, t in headings if t == title} for _, title in headings}
    assert [t for _, t in headings].count("Travel handbook") == 2, headings
    assert all(len(found) == 1 for found in numbers.values()), headings
    assert len({n for n, _ in headings}) == len(numbers)  # one number per document

    # One source per document, numbered as the model read them; the reply cites them.
    [sources] = [f["items"] for f in frames if f["type"] == "sources"]
    by_title = {s["document_title"]: s for s in sources}
    assert sorted(by_title) == sorted(numbers)
    assert all({str(s["n"])} == numbers[t] for t, s in by_title.items())
    handbook = by_title["Travel handbook"]
    assert f"Travel handbook says so [{handbook['n']}]." in reply.content

    # On the page: each [n] of the text links to its source's passage; chips list them.
    page = await page_of(alice, conversation)
    content = page.split('class="content markdown"', 2)[-1].split("</div>", 1)[0]
    assert f'<a class="cite" href="{handbook["url"]}"' in content
    assert f">{handbook['n']}</a>" in content and f"[{handbook['n']}]" not in content
    chips = page.split('<ol class="sources"', 1)[1].split("</ol>", 1)[0]
    assert chips.count('class="source"') == len(sources)
    assert f'href="{handbook["url"]}"' in chips and "Travel handbook" in chips


async def test_a_file_attached_and_in_the_library_is_cited_once(model, alice):
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    upload = sync_to_async(upload_document)
    await upload(user=alice, filename="travel.md", data=TRAVEL.encode(), title="Travel handbook")
    await upload(
        user=alice, filename="travel.md", data=TRAVEL.encode(), scope=conversation.id
    )  # the same file, attached to this conversation
    with rls.as_user(alice.pk):
        found = await hybrid.aretrieve(
            user_id=alice.pk, query="per diem for meals abroad", scope=conversation.id
        )
    assert len({f["document_id"] for f in found if "87 euros" in f["text"]}) == 2  # both copies

    _reply, frames = await ask(alice, conversation, content="What is the per diem for meals?")
    [sources] = [f["items"] for f in frames if f["type"] == "sources"]
    assert len(sources) == 1
    assert system_prompt(model).count("87 euros") == 1


async def test_passages_found_on_no_real_evidence_are_neither_sent_nor_cited(model, alice):
    await sync_to_async(upload_document)(
        user=alice, filename="travel.md", data=TRAVEL.encode(), title="Travel handbook"
    )
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    question = "Who painted the Mona Lisa?"
    with rls.as_user(alice.pk):
        found = await hybrid.aretrieve(user_id=alice.pk, query=question)
    # The meaning path always answers with its nearest passages: here, all far.
    assert found and not any(f["relevant"] for f in found), found

    _reply, frames = await ask(alice, conversation, content=question)
    routes = [f for f in frames if f["type"] == "thinking" and f["step"] == "route"]
    assert routes[0]["code"] == "route.documents"  # the model voted for the documents…
    assert not [f for f in frames if f["type"] == "sources"]  # …and nothing is cited
    assert [f for f in frames if f.get("code") == "retrieve.nothing"]
    assert "87 euros" not in system_prompt(model) and "14 days" not in system_prompt(model)
    page = await page_of(alice, conversation)
    assert 'class="sources"' not in page
