"""A reply never repeats the words a failed tool call gave the model (agent/tool_echo.py)."""

from __future__ import annotations

import random

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.failure_replies import FAILURE_REPLIES
from agent.nodes.tools import ERROR_PREFIX
from agent.tool_echo import ToolEchoFilter, failures_of_turn

INSTRUCTION = (
    "Not saved: it looks like sensitive information (a card number). Memories the assistant"
    " saves never hold it; tell the user so in their language."
)
REFUSAL = ToolMessage(
    ERROR_PREFIX + INSTRUCTION,
    tool_call_id="call_1",
    name="remember",
    status="error",
    artifact={"code": "memory.sensitive_financial", "params": {"tool": "remember"}},
)
ENGLISH, KOREAN = FAILURE_REPLIES["memory.sensitive_financial"]


def streamed(text: str, language: str = "en", seed: int = 0) -> tuple[str, ToolEchoFilter]:
    """Stream `text` through a filter in random small pieces; return what was passed on."""
    out: list[str] = []
    echo = ToolEchoFilter([REFUSAL], language, out.append)
    rng, i = random.Random(seed), 0
    while i < len(text):
        n = rng.randint(1, 7)
        echo(text[i : i + n])
        i += n
    echo.close()
    assert "".join(out) == echo.text
    return echo.text, echo


@pytest.mark.parametrize("seed", range(5))
def test_a_repeated_failure_becomes_the_sentence_for_people(seed):
    text, echo = streamed(f"{ERROR_PREFIX}{INSTRUCTION} Anything else?", seed=seed)
    assert text == f"{ENGLISH} Anything else?"
    assert echo.changed


def test_each_sentence_is_caught_alone_in_any_case_and_said_once():
    reply = "Sorry! NOT SAVED: it looks like sensitive information (a card number). " + (
        "Tell the user so in their language. Bye."
    )
    text, _ = streamed(reply)
    assert text == f"Sorry! {ENGLISH} Bye."
    assert "tell the user" not in text.lower() and "Error" not in text


def test_a_korean_conversation_hears_it_in_korean():
    text, _ = streamed(f"{ERROR_PREFIX}{INSTRUCTION}", language="ko")
    assert text == KOREAN


@pytest.mark.parametrize("seed", range(3))
def test_a_reply_that_repeats_nothing_passes_unchanged(seed):
    reply = "I can't keep card numbers as memories, but I can help with anything else. Error"
    text, echo = streamed(reply, seed=seed)
    assert text == reply and not echo.changed
    assert echo.applied_to(AIMessage(content=reply)).content == reply


def test_the_whole_message_keeps_what_people_were_shown():
    _, echo = streamed(f"{ERROR_PREFIX}{INSTRUCTION}")
    assert echo.applied_to(AIMessage(content=ERROR_PREFIX + INSTRUCTION)).content == ENGLISH


def test_only_this_turns_failures_count():
    earlier = REFUSAL.model_copy(update={"tool_call_id": "call_0"})
    ok = ToolMessage("Saved to memory: x", tool_call_id="call_2", name="remember")
    messages = [earlier, HumanMessage("again"), AIMessage(content=""), REFUSAL, ok]
    assert failures_of_turn(messages) == [REFUSAL]
