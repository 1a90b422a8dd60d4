"""Run the tool calls of the last AI message: in parallel, errors fed back, repeats reused.

Every tool failure is worded here, once: the model reads "Error: <what went wrong>" (a
`ToolFailed` message may instruct it), the person sees a step from agent/steps.py, and the
ToolMessage's artifact carries that step's code and params for whoever answers next.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from agent.incoming import clean
from agent.progress import emit, emit_step
from agent.state import AgentContext, AgentState
from agent.steps import ToolFailed, tool_code
from agent.tools import CONTEXT_KEY, TOOLS

logger = logging.getLogger(__name__)
TOOL_TIMEOUT_SECONDS = 30.0
RESULT_CHARS = 4000
RESULT_PREVIEW_CHARS = 200  # of a result, in the step the person sees
ERROR_PREFIX = "Error: "


@dataclass(frozen=True)
class Outcome:
    """What one tool call came to: the text the model reads and, on failure, the step."""

    text: str
    failure: dict[str, Any] | None = field(default=None)  # {"code", "params"}

    @property
    def failed(self) -> bool:
        return self.failure is not None


def as_outcome(value: dict[str, Any]) -> Outcome:
    """Return a result kept earlier in this turn (the route node empties them per turn)."""
    return Outcome(text=str(value.get("text", "")), failure=value.get("failure"))


def call_signature(call: ToolCall) -> str:
    """Return the key that makes two calls "the same" (name and arguments)."""
    return f"{call['name']}:{json.dumps(call['args'], sort_keys=True, ensure_ascii=False)}"


def failed(call: ToolCall, model_text: str, code: str | None = None, **params: Any) -> Outcome:
    """Return a failed outcome: `model_text` for the model, a step for the person."""
    step = code or tool_code(call["name"], "failed")
    return Outcome(
        text=f"{ERROR_PREFIX}{model_text}",
        failure={"code": step, "params": {"tool": call["name"], **params}},
    )


async def execute_call(call: ToolCall, config: RunnableConfig) -> Outcome:
    """Run one tool call; a failure becomes an outcome, never an exception.

    What a tool returns enters here, and is cleaned here (agent/incoming.py).
    """
    outcome = await _run_call(call, config)
    return Outcome(text=clean(outcome.text)[:RESULT_CHARS], failure=clean(outcome.failure))


async def _run_call(call: ToolCall, config: RunnableConfig) -> Outcome:
    tool = TOOLS.get(call["name"])
    if tool is None:
        return failed(call, f"unknown tool {call['name']!r}")
    try:
        result = await asyncio.wait_for(tool.ainvoke(call["args"], config), TOOL_TIMEOUT_SECONDS)
    except TimeoutError:
        return failed(call, f"{call['name']} timed out")
    except ToolFailed as refusal:  # a reason the person should hear
        return failed(call, str(refusal), refusal.code, **refusal.params)
    except Exception as exc:  # the model reads the error and answers from it
        logger.info("tool %s failed: %s: %s", call["name"], type(exc).__name__, exc)
        return failed(call, str(exc) or type(exc).__name__)
    return Outcome(text=str(result))


def _announce(call: ToolCall, repeated: bool) -> None:
    """Report a tool call (and whether it is a repeat) on the progress stream."""
    params: dict[str, Any] = {"tool": call["name"], "args": call["args"]}
    if repeated:
        params["repeat"] = True  # answered from this turn's earlier result
    step = emit_step(tool_code(call["name"], "call"), **params)
    emit(
        {"kind": "tool_call", "id": call["id"], "name": call["name"], "args": call["args"], **step}
    )


def _report(call: ToolCall, outcome: Outcome) -> None:
    """Report a tool result on the progress stream: a failure as its step, never raw."""
    if outcome.failure is not None:
        step = emit_step(outcome.failure["code"], **outcome.failure["params"])
        extra: dict[str, Any] = {}
    else:
        preview = outcome.text[:RESULT_PREVIEW_CHARS]
        step = emit_step(tool_code(call["name"], "done"), tool=call["name"], result=preview)
        extra = {"output": outcome.text}
    emit(
        {
            "kind": "tool_result",
            "id": call["id"],
            "name": call["name"],
            "is_error": outcome.failed,
            **extra,
            **step,
        }
    )


def tool_message(call: ToolCall, outcome: Outcome) -> ToolMessage:
    """Return the message that answers `call` (a failure's step rides as its artifact)."""
    return ToolMessage(
        outcome.text,
        tool_call_id=call["id"],
        name=call["name"],
        status="error" if outcome.failed else "success",
        artifact=outcome.failure,
    )


async def tools(
    state: AgentState, runtime: Runtime[AgentContext], config: RunnableConfig
) -> dict[str, Any]:
    """Execute new calls concurrently; answer repeated ones from this turn's results."""
    last = state["messages"][-1]
    calls = last.tool_calls if isinstance(last, AIMessage) else []
    known = {key: as_outcome(value) for key, value in state.get("tool_results", {}).items()}
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
        outcome = known[call_signature(call)]
        _report(call, outcome)
        replies.append(tool_message(call, outcome))
    saved = {key: {"text": o.text, "failure": o.failure} for key, o in known.items()}
    return {"messages": replies, "tool_results": saved}
