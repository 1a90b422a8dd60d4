"""Tools: round trip, errors fed back, the round cap, repeats, parallel calls."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import pytest

from agent import prompts
from agent.tools.calculator import CalculatorError, calculate
from agent.tools.clock import describe_now
from tests.agent.helpers import new_id, run_one
from tests.support.openai_replies import Reply, ToolCall


def tool_messages(body) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


async def test_calculator_round_trip(online_config, saver, fake_openai):
    fake_openai.enqueue(
        Reply(tool_calls=[ToolCall("calculator", {"expression": "123 * 456"})]),
        "123 × 456 = 56088",
    )
    result = await run_one(online_config, saver, new_id(), "123 * 456 계산해줘")
    assert result.finished["content"] == "123 × 456 = 56088"
    assert tool_messages(fake_openai.requests[1])[0]["content"] == "56088"
    assert [p["type"] for p in result.finished["parts"] if p["type"].startswith("tool")] == [
        "tool_call",
        "tool_result",
    ]
    assert result.thinking("tool_call") == ["Using the calculator"]
    assert result.thinking("tool_result") == ["Used the calculator"]
    assert result.steps("tool_result")[0]["params"]["result"] == "56088"
    assert result.finished["context"]["main_calls"] == 2
    assert len(fake_openai.requests) == 2  # no router call: the user has no documents


async def test_tool_error_is_fed_back_to_the_model(online_config, saver, fake_openai):
    fake_openai.enqueue(
        Reply(tool_calls=[ToolCall("calculator", {"expression": "1/0"})]),
        "Sorry, that divides by zero.",
    )
    result = await run_one(online_config, saver, new_id(), "what is 1/0?")
    fed_back = tool_messages(fake_openai.requests[1])[0]["content"]
    assert fed_back.startswith("Error:") and "division by zero" in fed_back
    assert result.finished["finish_reason"] == "end_turn"
    assert result.finished["content"] == "Sorry, that divides by zero."
    [failure] = [p for p in result.finished["parts"] if p.get("is_error")]
    assert failure["code"] == "calculator.division_by_zero"
    assert failure["content"] == "The calculator cannot divide by zero"
    assert "Error" not in str(result.steps("tool_result"))


async def test_unknown_tool_and_bad_arguments_become_errors(online_config, saver, fake_openai):
    fake_openai.enqueue(
        Reply(
            tool_calls=[
                ToolCall("no_such_tool", {}),
                ToolCall("calculator", {"wrong": 1}),
            ]
        ),
        "done",
    )
    result = await run_one(online_config, saver, new_id(), "try tools")
    results = [m["content"] for m in tool_messages(fake_openai.requests[1])]
    assert all(r.startswith("Error:") for r in results) and len(results) == 2
    assert result.finished["content"] == "done"
    # The person sees which tool did not work, in words, not the errors the model read.
    assert result.thinking("tool_result") == [
        "The tool no_such_tool did not work this time",
        "The calculator could not work that out",
    ]


async def test_rounds_are_capped_then_answered_without_tools(online_config, saver, fake_openai):
    config = replace(online_config, max_iterations=2)
    fake_openai.responder = lambda body: (
        Reply(tool_calls=[ToolCall("calculator", {"expression": f"{len(body['messages'])} + 1"})])
        if body.get("tools")
        else Reply(text="Here is what I found.")
    )
    result = await run_one(config, saver, new_id(), "loop forever")
    assert [bool(b.get("tools")) for b in fake_openai.requests] == [True, True, False]
    assert (
        prompts.FINAL_ANSWER_NOTE.splitlines()[0]
        in fake_openai.requests[-1]["messages"][0]["content"]
    )
    assert result.finished["content"] == "Here is what I found."
    assert result.finished["finish_reason"] == "end_turn"


async def test_repeated_identical_call_is_not_run_again(online_config, saver, fake_openai):
    calls = []

    async def retriever(query: str, k: int) -> list[dict]:
        calls.append(query)
        return [
            {
                "document_id": "d1",
                "document_title": "Policy",
                "section": "1",
                "snippet": "15 days",
                "score": 1.0,
                "text": "Annual leave: 15 days",
            }
        ]

    same = ToolCall("search_documents", {"query": "leave", "k": 2})
    fake_openai.enqueue(  # the passage scores past the threshold: no routing vote is asked
        Reply(tool_calls=[same]),
        Reply(tool_calls=[ToolCall("search_documents", {"k": 2, "query": "leave"}, id="again")]),
        "You get 15 days.",
    )
    result = await run_one(
        online_config,
        saver,
        new_id(),
        "how many leave days?",
        retriever=retriever,
        has_documents=True,
    )
    assert calls == ["how many leave days?", "leave"]  # routing's look, then the tool once
    assert result.finished["content"] == "You get 15 days."
    assert any(e["params"].get("repeat") for e in result.steps("tool_call"))
    second = tool_messages(fake_openai.requests[2])
    assert second[-1]["content"] == second[0]["content"]


async def test_independent_calls_in_one_message_run_in_parallel(online_config, saver, fake_openai):
    spans: list[tuple[float, float]] = []

    async def slow(query: str, k: int) -> list[dict]:
        start = time.monotonic()
        await asyncio.sleep(0.4)
        spans.append((start, time.monotonic()))
        return []

    fake_openai.enqueue(
        Reply(tool_calls=[ToolCall("RouteDecision", {"route": "agent", "reason": "x"})]),
        Reply(
            tool_calls=[
                ToolCall("search_documents", {"query": "a"}),
                ToolCall("search_conversations", {"query": "b"}),
            ]
        ),
        "both searched",
    )
    started = time.monotonic()
    result = await run_one(
        online_config,
        saver,
        new_id(),
        "look everywhere",
        retriever=slow,
        has_documents=True,
        search_conversations=slow,
    )
    assert result.finished["content"] == "both searched"
    spans = spans[1:]  # the first is routing's look at the documents, before any tool
    assert len(spans) == 2
    assert spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1]  # they overlapped
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("123 * 456", "56088"),
        ("2^10", "1024"),
        ("(1+2)*3.5", "10.5"),
        ("sqrt(16)", "4"),
        ("7 // 2", "3"),
    ],
)
def test_calculator_evaluates_arithmetic(expression, expected):
    assert calculate(expression) == expected


@pytest.mark.parametrize(
    "expression",
    [
        "1/0",
        "10**100000",
        "9**9**9",
        "__import__('os').system('true')",
        "open('x')",
        "a.b",
        "[1]*9",
        "x" * 600,
    ],
)
def test_calculator_refuses_unsafe_or_huge_input(expression):
    with pytest.raises(CalculatorError):
        calculate(expression)


def test_datetime_tool_knows_time_zones():
    assert "Asia/Seoul" in describe_now("Asia/Seoul")
    assert "+09:00" in describe_now("Asia/Seoul")
    with pytest.raises(ValueError, match="unknown time zone"):
        describe_now("Mars/Olympus")


async def test_a_tools_result_is_cleaned_before_the_model_and_the_parts_see_it(
    online_config, saver, fake_openai
):
    async def dirty(query: str, k: int) -> list[dict]:
        return [{"title": "Old chat", "snippet": "found\x00 it \ud800"}]

    fake_openai.enqueue(Reply(tool_calls=[ToolCall("search_conversations", {"query": "a"})]), "ok")
    result = await run_one(online_config, saver, new_id(), "look", search_conversations=dirty)
    assert result.finished["finish_reason"] == "end_turn"
    sent = [m for m in fake_openai.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(sent) == 1 and "found it \ufffd" in sent[0]["content"]
    (part,) = [p for p in result.finished["parts"] if p["type"] == "tool_result"]
    assert "found it \ufffd" in part["output"] and "\x00" not in part["output"]
