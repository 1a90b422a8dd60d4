"""The step catalog: one definition of every step a person may see while a reply is made."""

from __future__ import annotations

import re
from typing import get_args

import pytest

from agent.events import ThinkingStep
from agent.steps import CODES, STEPS, TOOL_WORDS, ToolFailed, describe, step, tool_code
from agent.tools import CONFIGURED_TOOLS, TOOLS

DEVELOPER_WORDS = re.compile(r"\(s\)|\(ies\)|\w+(Error|Exception)\b|Error:|→|\w+_\w+")


def test_every_step_belongs_to_a_kind_of_thinking_frame():
    assert {s.kind for s in STEPS.values()} <= set(get_args(ThinkingStep))
    assert tuple(STEPS) == CODES


def test_every_built_in_tool_has_words_for_people():
    assert set(TOOL_WORDS) == set(TOOLS) | set(CONFIGURED_TOOLS.values())
    for name in TOOL_WORDS:
        for outcome in ("call", "done", "failed"):
            assert tool_code(name, outcome) in STEPS
    assert tool_code("mcp:files:read", "call") == "tool.other.call"
    # An MCP server's tool: words that name the tool and its server.
    assert tool_code("lookup", "call", server="files") == "tool.mcp.call"
    assert describe("tool.mcp.call", {"tool": "lookup", "server": "files"}) == (
        "Using lookup on files"
    )


@pytest.mark.parametrize("code", CODES)
def test_step_words_are_for_people(code):
    words = STEPS[code].text + " " + STEPS[code].plural
    assert not DEVELOPER_WORDS.search(words.replace("%(", "").replace(")s", ""))


def test_counts_choose_singular_or_plural_words():
    assert describe("retrieve.found", {"count": 1}) == "Searched your documents: 1 passage found"
    assert describe("retrieve.found", {"count": 3}) == "Searched your documents: 3 passages found"
    assert describe("memory.in_view", {"messages": 4}) == "Looked at 4 earlier messages"


def test_a_step_carries_its_kind_code_params_and_sentence():
    assert step("tool.calculator.call", tool="calculator", args={"expression": "1+1"}) == {
        "step": "tool_call",
        "code": "tool.calculator.call",
        "params": {"tool": "calculator", "args": {"expression": "1+1"}},
        "content": "Using the calculator",
    }
    with pytest.raises(KeyError):
        step("no.such.step")


def test_only_a_tool_result_step_can_be_a_tool_failure():
    assert ToolFailed("memory.off", "Memory is off.").code == "memory.off"
    with pytest.raises(ValueError):
        ToolFailed("retrieve.failed", "not a tool's step")
