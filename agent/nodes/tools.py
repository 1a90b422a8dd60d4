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
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from agent.incoming import clean
from agent.progress import emit, emit_step
from agent.state import AgentContext, AgentState
from agent.steps import ToolFailed, tool_code
from agent.tools import CONTEXT_KEY, tools_for

logger = logging.getLogger(__name__)
TOOL_TIMEOUT_SECONDS = 30.0
RESULT_CHARS = 4000
RESULT_PREVIEW_CHARS = 200  # of a result, in the step the person sees
ERROR_PREFIX = "Error: "
IMAGE_TYPES = {"image/png", "image/jpeg", "image/webp", "image/gif"}
IMAGE_BYTES = 2 * 1024 * 1024
MAX_TOOL_IMAGES = 4


@dataclass(frozen=True)
class Outcome:
    """What one tool call came to: the text the model reads and, on failure, the step;
    `sources` are what a web tool read ({title, url, snippet}), cited like documents."""

    text: str
    failure: dict[str, Any] | None = field(default=None)  # {"code", "params"}
    sources: list[dict[str, Any]] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)  # {name, content_type, data_base64}

    @property
    def failed(self) -> bool:
        return self.failure is not None


def as_outcome(value: dict[str, Any]) -> Outcome:
    """Return a result kept earlier in this turn (route empties them at the start of each turn)."""
    return Outcome(
        text=str(value.get("text", "")),
        failure=value.get("failure"),
        sources=list(value.get("sources") or []),
    )


def call_signature(call: ToolCall) -> str:
    """Return the key that makes two calls "the same" (name and arguments)."""
    return f"{call['name']}:{json.dumps(call['args'], sort_keys=True, ensure_ascii=False)}"


def failed(call: ToolCall, model_text: str, code: str | None = None, **params: Any) -> Outcome:
    """Return a failed outcome: `model_text` for the model, a step for the person."""
    step = code or tool_code(call["name"], "failed", server=params.get("server"))
    return Outcome(
        text=f"{ERROR_PREFIX}{model_text}",
        failure={"code": step, "params": {"tool": call["name"], **params}},
    )


async def execute_call(call: ToolCall, tool: BaseTool | None, config: RunnableConfig) -> Outcome:
    """Run one tool call; a failure becomes an outcome, never an exception.

    What a tool returns enters here, is cut to RESULT_CHARS (a server may answer with
    megabytes) and cleaned (agent/incoming.py).
    """
    outcome = await _run_call(call, tool, config)
    return Outcome(
        text=clean(outcome.text[: RESULT_CHARS + 1000])[:RESULT_CHARS],
        failure=clean(outcome.failure),
        sources=clean(outcome.sources),
        images=outcome.images,  # base64 of checked kinds: nothing to clean
    )


async def _run_call(call: ToolCall, tool: BaseTool | None, config: RunnableConfig) -> Outcome:
    if tool is None:
        return failed(call, f"unknown tool {call['name']!r}")
    meta = tool.metadata or {}
    who = _who(tool, call)
    invocation = {**call, "type": "tool_call"}  # answered with a ToolMessage: content + artifact
    try:
        result = await asyncio.wait_for(
            tool.ainvoke(invocation, config), meta.get("timeout", TOOL_TIMEOUT_SECONDS)
        )
    except TimeoutError:
        return failed(call, f"{call['name']} timed out", "tool.timeout", **who)
    except ToolFailed as refusal:  # a reason the person should hear
        return failed(call, str(refusal), refusal.code, **refusal.params)
    except Exception as exc:  # the model reads the error and answers from it
        logger.info("tool %s failed: %s: %s", call["name"], type(exc).__name__, exc)
        if who.get("server") and _unreachable(exc):
            return failed(call, f"could not reach {who['server']}", "tool.unreachable", **who)
        return failed(call, _exception_text(exc), **who)
    if isinstance(result, ToolMessage):
        artifact = result.artifact if isinstance(result.artifact, dict) else {}
        text = content_text(result.content)
        if result.status == "error":  # an MCP server's own error result
            return failed(call, text or "the tool reported an error", **who)
        return Outcome(
            text=text,
            sources=_sources(artifact.get("sources")),
            images=_images(artifact.get("images")),
        )
    return Outcome(text=content_text(result))


def content_text(content: Any) -> str:
    """Return a tool's answer as text: MCP tools answer with a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'content')}]")
        return "\n".join(parts)
    return str(content)


def _unreachable(exc: BaseException) -> bool:
    """Say whether a tool server could not be reached or went away mid-call."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    names = {type(e).__name__ for e in (exc, exc.__cause__, exc.__context__) if e is not None}
    return (
        isinstance(exc, OSError | ConnectionError)
        or bool(names & {"ConnectError", "ReadError", "RemoteProtocolError", "ClosedResourceError"})
        or "connection closed" in str(exc).lower()
    )


def _exception_text(exc: BaseException) -> str:
    """Return what went wrong, for the model (an exception group: its first cause)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__


def _images(value: Any) -> list[dict[str, Any]]:
    """Return a tool's images ({name, content_type, data_base64}) of the kinds a page
    shows, each at most IMAGE_BYTES (the store checks the bytes again)."""
    if not isinstance(value, list):
        return []
    keep = []
    for item in value[:MAX_TOOL_IMAGES]:
        if not isinstance(item, dict) or item.get("content_type") not in IMAGE_TYPES:
            continue
        data = item.get("data_base64")
        if isinstance(data, str) and len(data) <= IMAGE_BYTES * 4 // 3 + 4:
            keep.append(
                {
                    "name": str(item.get("name") or "image")[:200],
                    "content_type": item["content_type"],
                    "data_base64": data,
                }
            )
    return keep


def _sources(value: Any) -> list[dict[str, Any]]:
    """Return a tool's sources, each {n, title, url, snippet} as text (others dropped): `n`
    the number the tool's text gave it (its place in the list when it says none)."""
    if not isinstance(value, list):
        return []
    keep = []
    for place, item in enumerate(value[:20], 1):
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            n = item.get("n")
            keep.append(
                {
                    "n": n if isinstance(n, int) and not isinstance(n, bool) else place,
                    "title": str(item.get("title") or item.get("document_title") or item["url"])[
                        :300
                    ],
                    "url": item["url"][:2000],
                    "snippet": str(item.get("snippet") or "")[:500],
                    **({"section": str(item["section"])[:300]} if item.get("section") else {}),
                }
            )
    return keep


def _who(tool: BaseTool | None, call: ToolCall) -> dict[str, Any]:
    """Return the step's names of a tool: an MCP tool's own name and its server's."""
    meta = (tool.metadata or {}) if tool is not None else {}
    if meta.get("server"):
        return {"tool": meta.get("tool") or call["name"], "server": meta["server"]}
    return {"tool": call["name"]}


def _announce(call: ToolCall, who: dict[str, Any], repeated: bool) -> None:
    """Report a tool call (and whether it is a repeat) on the progress stream."""
    params: dict[str, Any] = {**who, "args": call["args"]}
    if repeated:
        params["repeat"] = True  # answered from this turn's earlier result
    step = emit_step(tool_code(call["name"], "call", server=who.get("server")), **params)
    emit(
        {"kind": "tool_call", "id": call["id"], "name": call["name"], "args": call["args"], **step}
    )


def _report(call: ToolCall, who: dict[str, Any], outcome: Outcome) -> None:
    """Report a tool result on the progress stream: a failure as its step, never raw."""
    if outcome.failure is not None:
        step = emit_step(outcome.failure["code"], **{**outcome.failure["params"], **who})
        extra: dict[str, Any] = {}
    else:
        preview = outcome.text[:RESULT_PREVIEW_CHARS]
        code = tool_code(call["name"], "done", server=who.get("server"))
        step = emit_step(code, **who, result=preview)
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
    if outcome.sources:  # the pages a web tool read: cited like documents
        emit({"kind": "sources", "items": outcome.sources})
    if outcome.images:  # what a tool drew: kept as the reply's attachments
        emit({"kind": "images", "items": outcome.images})


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
    registry = {t.name: t for t in tools_for(runtime.context)}
    fresh: dict[str, ToolCall] = {}
    for call in calls:
        signature = call_signature(call)
        who = _who(registry.get(call["name"]), call)
        _announce(call, who, repeated=signature in known or signature in fresh)
        if signature not in known:
            fresh.setdefault(signature, call)
    results = await asyncio.gather(
        *(execute_call(c, registry.get(c["name"]), tool_config) for c in fresh.values())
    )
    known.update(zip(fresh, results, strict=True))
    replies = []
    for call in calls:
        outcome = known[call_signature(call)]
        _report(call, _who(registry.get(call["name"]), call), outcome)
        replies.append(tool_message(call, outcome))
    saved = {
        key: {"text": o.text, "failure": o.failure, "sources": o.sources}
        for key, o in known.items()
    }
    return {"messages": replies, "tool_results": saved}
