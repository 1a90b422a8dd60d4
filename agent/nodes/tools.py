"""Run the tool calls of the last AI message: in parallel, errors fed back, repeats reused."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from agent.progress import emit, emit_thinking
from agent.state import AgentContext, AgentState
from agent.tools import CONTEXT_KEY, TOOLS

TOOL_TIMEOUT_SECONDS = 30.0
RESULT_CHARS = 4000
ERROR_PREFIX = "Error: "


def call_signature(call: ToolCall) -> str:
    """Return the key that makes two calls "the same" (name and arguments)."""
    return f"{call['name']}:{json.dumps(call['args'], sort_keys=True, ensure_ascii=False)}"


async def execute_call(call: ToolCall, config: RunnableConfig) -> str:
    """Run one tool call and return its text; failures come back as "Error: ..."."""
    tool = TOOLS.get(call["name"])
    if tool is None:
        return f"{ERROR_PREFIX}unknown tool {call['name']!r}"
    try:
        result = await asyncio.wait_for(tool.ainvoke(call["args"], config), TOOL_TIMEOUT_SECONDS)
    except TimeoutError:
        return f"{ERROR_PREFIX}{call['name']} timed out"
    except Exception as exc:  # the model reads the error and answers from it
        return f"{ERROR_PREFIX}{exc}"
    return str(result)[:RESULT_CHARS]


def _announce(call: ToolCall, repeated: bool) -> None:
    """Report a tool call (and whether it is a repeat) on the progress stream."""
    args = json.dumps(call["args"], ensure_ascii=False)
    note = " (repeat: reusing the earlier result)" if repeated else ""
    emit_thinking("tool_call", f"{call['name']}({args}){note}")
    emit({"kind": "tool_call", "id": call["id"], "name": call["name"], "args": call["args"]})


def _report(call: ToolCall, text: str) -> None:
    """Report a tool result on the progress stream."""
    is_error = text.startswith(ERROR_PREFIX)
    emit_thinking("tool_result", f"{call['name']}: {text[:200]}")
    emit(
        {
            "kind": "tool_result",
            "id": call["id"],
            "name": call["name"],
            "content": text,
            "is_error": is_error,
        }
    )


async def tools(
    state: AgentState, runtime: Runtime[AgentContext], config: RunnableConfig
) -> dict[str, Any]:
    """Execute new calls concurrently; answer repeated ones from this turn's results."""
    last = state["messages"][-1]
    calls = last.tool_calls if isinstance(last, AIMessage) else []
    known = dict(state.get("tool_results", {}))
    tool_config: RunnableConfig = {
        **config,
        "configurable": {**config.get("configurable", {}), CONTEXT_KEY: runtime.context},
    }
    fresh: dict[str, ToolCall] = {}
    for call in calls:
        signature = call_signature(call)
        _announce(call, repeated=signature in known or signature in fresh)
        if signature not in known:
            fresh.setdefault(signature, call)
    results = await asyncio.gather(*(execute_call(c, tool_config) for c in fresh.values()))
    known.update(zip(fresh, results, strict=True))
    replies = []
    for call in calls:
        text = known[call_signature(call)]
        _report(call, text)
        status = "error" if text.startswith(ERROR_PREFIX) else "success"
        replies.append(ToolMessage(text, tool_call_id=call["id"], name=call["name"], status=status))
    return {"messages": replies, "tool_results": known}
