"""Long conversations stay bounded: whatever the summarizer does, what a request carries
and what the thread keeps stay within the memory settings, and the facts are recalled.

The real agent and reply orchestrator, PostgreSQL (or SQLite) and a fake OpenAI-compatible
server whose summarizer accepts, refuses (a summary the checks reject) or fails (HTTP 500).
"""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async

from conversations import services
from conversations.models import Message
from tests.agent.helpers import is_summarizer_request, memory_responder
from tests.support.openai_replies import Reply, forced_tool
from tests.support.turns import ask

from .conftest import sent_to_model

pytestmark = pytest.mark.django_db(transaction=True)

TURNS = 40
FACT = "My locker code is 4417 and my badge colour is vermilion."


def refusing(body: dict) -> Reply:
    """A summarizer whose every summary is far too short; everything else as usual."""
    if is_summarizer_request(body):
        return Reply(text="OK")
    return memory_responder(body)


def failing(body: dict) -> Reply:
    """A summarizer whose server fails; everything else as usual."""
    if is_summarizer_request(body):
        return Reply(status=500)
    return memory_responder(body)


def main_requests(server) -> list[dict]:
    return [b for b in server.requests if not forced_tool(b) and not is_summarizer_request(b)]


def filler(turn: int) -> str:
    return (
        f"Day {turn} notes: the design review covered onboarding, the support backlog and "
        f"the dashboard; nothing else to keep (ref item{turn}x)."
    )


@pytest.mark.parametrize(
    ("responder", "fallback"),
    [
        (memory_responder, None),
        (refusing, "memory.kept_words_refused"),
        (failing, "memory.kept_words_failed"),
    ],
    ids=["accepted", "refused", "failed"],
)
async def test_a_long_conversation_stays_bounded_and_recalls_its_facts(
    model, alice, settings, responder, fallback
):
    settings.CHAT_RATE_LIMIT = "100000/m"
    model.responder = responder
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    steps: list[str] = []
    await ask(alice, conversation, content=FACT)
    for turn in range(2, TURNS):
        _reply, frames = await ask(alice, conversation, content=filler(turn))
        steps += [f["code"] for f in frames if f["type"] == "thinking" and f["step"] == "memory"]
    reply, _ = await ask(alice, conversation, content="What is my locker code?")

    # Compression demonstrably happened: 80 messages were written, a dozen at most are sent.
    assert await Message.objects.filter(conversation=conversation).acount() == 2 * TURNS
    sizes = [len(b["messages"]) for b in main_requests(model)]
    assert max(sizes[12:]) <= settings.MEMORY_MAX_MESSAGES + 2, sizes
    # Each fold went somewhere: into summaries, or (refused, failed) the user's own words.
    assert steps.count("memory.summarized" if fallback is None else fallback) >= 1
    # A refusing or failing summarizer is not asked on every fold, only after pauses that
    # double (1, 3, 7 folds): 3 attempts in 13 folds (a failing server's client tries each
    # attempt 3 times).
    summarizer_calls = len([b for b in model.requests if is_summarizer_request(b)])
    if fallback is not None:
        attempts = summarizer_calls / (3 if responder is failing else 1)
        assert attempts <= 3 < TURNS / settings.MEMORY_KEEP_RECENT, summarizer_calls
    # And the fact told at turn 1 still reaches the model at turn 40.
    assert "4417" in sent_to_model(model)
    ledger = reply.metadata["context"]
    assert len(ledger["message_ids"]) <= settings.MEMORY_MAX_MESSAGES + 1
    assert ledger["summaries"], "older messages left the window for the summaries"


async def test_a_summary_that_runs_long_is_cut_to_its_segment(model, alice, settings):
    """A summarizer that writes 3,000 words is accepted (it kept the facts) but cut."""

    def wordy(body: dict) -> Reply:
        if is_summarizer_request(body):
            said = " ".join(re.findall(r"item\d+x|4417", str(body["messages"])))
            return Reply(text=f"The user wrote notes. {said} " + "More detail here. " * 1000)
        return memory_responder(body)

    model.responder = wordy
    settings.CHAT_RATE_LIMIT = "100000/m"
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    await ask(alice, conversation, content=FACT)
    for turn in range(2, 16):
        reply, _ = await ask(alice, conversation, content=filler(turn))
    summaries = reply.metadata["context"]["summaries"]
    assert summaries
    for summary in summaries:
        assert 100 < len(summary["text"]) < 3_000  # kept, but cut from ~18,000 characters
