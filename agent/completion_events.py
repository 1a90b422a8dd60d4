"""What the events of one streamed chat completion add up to, and how a stream fails.

agent/openai_stream.py reads the server's lines; each `data:` line is one `event` here,
absorbed into a `Completion`, which hands text and reasoning on as they come and builds
the LangChain message once, at the end.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from langchain_core.messages import AIMessage, AIMessageChunk, message_chunk_to_message
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call_chunk

from agent.reasoning import reasoning_of

OnText = Callable[[str], None]


class ModelStreamError(RuntimeError):
    """The stream failed after the server answered 200: it reported an error, or sent
    what is not an event. `code` is the step (agent/steps.py) that tells the person."""

    code = "model.failed"
    params: dict[str, Any] = {}


class ModelStreamCut(ModelStreamError):
    """The stream ended before the reply did: no `finish_reason` came (llama.cpp's server
    ends a stream so when another request cuts it, or its context is full)."""

    code = "model.cut_off"


class ModelSilent(ModelStreamError):
    """The server sent nothing for too long: no first byte (`model.timed_out`), or no next
    line mid-stream (`model.stalled`)."""

    def __init__(self, *, mid_stream: bool, seconds: float) -> None:
        where = "between two lines" if mid_stream else "before its first byte"
        super().__init__(f"the model server sent nothing for {seconds:g} s {where}")
        self.code = "model.stalled" if mid_stream else "model.timed_out"
        self.params = {"seconds": f"{seconds:g}"}


@dataclass
class _ToolCall:
    id: str | None = None
    name: str = ""
    args: list[str] = field(default_factory=list)


@dataclass
class Completion:
    """What the events of one completion add up to."""

    text: list[str] = field(default_factory=list)
    tool_calls: dict[int, _ToolCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    model: str | None = None
    id: str | None = None
    heard: bool = False  # an event came: the request is not sent again

    def absorb(self, event: dict[str, Any], on_text: OnText, on_reasoning: OnText) -> None:
        """Add one `chat.completion.chunk` event; pass its text and reasoning on at once."""
        self.heard = True
        if event.get("error"):
            error = event["error"]
            detail = error.get("message") if isinstance(error, dict) else error
            raise ModelStreamError(f"the model server failed mid-stream: {detail}")
        self.id = self.id or event.get("id")
        self.model = self.model or event.get("model")
        if event.get("usage"):
            self.usage = event["usage"]
        for choice in event.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            reasoning = reasoning_of(delta)
            if reasoning:
                on_reasoning(reasoning)  # never the reply's words: not kept in `text`
            content = delta.get("content")
            if content:
                self.text.append(content)
                on_text(content)
            for call in delta.get("tool_calls") or ():
                self._add_tool_call(call)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def _add_tool_call(self, delta: dict[str, Any]) -> None:
        call = self.tool_calls.setdefault(int(delta.get("index") or 0), _ToolCall())
        call.id = call.id or delta.get("id")
        function = delta.get("function") or {}
        call.name += function.get("name") or ""
        if function.get("arguments"):
            call.args.append(function["arguments"])

    def message(self) -> AIMessage:
        """Return the whole reply as `ChatOpenAI` would have merged it."""
        chunk = AIMessageChunk(
            content="".join(self.text),
            # Servers may repeat a completion id (fakes, some local servers); two messages
            # with one id would merge in the thread's state, so the message gets its own.
            id=f"lc_run-{uuid.uuid4()}",
            tool_call_chunks=[
                tool_call_chunk(name=c.name or None, args="".join(c.args), id=c.id, index=i)
                for i, c in sorted(self.tool_calls.items())
            ],
            usage_metadata=_usage_metadata(self.usage) if self.usage else None,
            response_metadata={
                "finish_reason": self.finish_reason,
                "model_name": self.model,
                "id": self.id,
                "model_provider": "openai",
            },
        )
        message = message_chunk_to_message(chunk)
        assert isinstance(message, AIMessage)
        return message


def _usage_metadata(usage: dict[str, Any]) -> UsageMetadata:
    input_tokens = int(usage.get("prompt_tokens") or 0)
    output_tokens = int(usage.get("completion_tokens") or 0)
    total = usage.get("total_tokens")
    return UsageMetadata(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=int(total) if total is not None else input_tokens + output_tokens,
    )


def event(data: str) -> dict[str, Any]:
    """Return one event's JSON object; raise ModelStreamError for anything else."""
    try:
        event = orjson.loads(data)  # ~5x json's speed, an event per token
    except orjson.JSONDecodeError:
        try:  # what orjson refuses and json reads: NaN, Infinity, 1e400, a lone surrogate
            event = json.loads(data)
        except ValueError:
            event = None
    if not isinstance(event, dict):
        raise ModelStreamError(f"the model server sent an event that is not JSON: {data[:200]!r}")
    return event
