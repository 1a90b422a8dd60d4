"""Events one agent turn yields; each maps one-to-one onto a websocket frame (SPEC)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

ThinkingStep = Literal["route", "retrieve", "memory", "tool_call", "tool_result", "generate"]
FinishReason = Literal["end_turn", "max_tokens", "stop_sequence", "stopped", "error", "interrupted"]


class ThinkingEvent(TypedDict):
    type: Literal["thinking"]
    step: ThinkingStep
    code: str  # one of agent/steps.py's STEPS: what pages translate
    params: dict[str, Any]  # the code's values ({"count": 3}); tool steps add args/result
    content: str  # the step in plain English (agent.steps.describe)


class TokenEvent(TypedDict):
    type: Literal["token"]
    index: int  # character offset of `text` in the reply
    text: str


class ReasoningEvent(TypedDict):
    type: Literal["reasoning"]
    index: int  # character offset of `text` in the reply's reasoning
    text: str


class SourcesEvent(TypedDict):
    type: Literal["sources"]
    items: list[dict[str, Any]]


class Usage(TypedDict):
    input_tokens: int
    output_tokens: int


class FinishedEvent(TypedDict):
    type: Literal["finished"]
    message_id: str  # the id the caller gave for the reply
    content: str
    parts: list[dict[str, Any]]  # {type: thinking|tool_call|tool_result|references, ...}
    model: str
    finish_reason: FinishReason
    usage: Usage
    context: dict[str, Any]  # the context ledger, stored as Message.metadata["context"]
    error: dict[str, str] | None  # {code, message}: SPEC "Failures named"
    checkpoint_id: str  # the thread right after this reply ("" if nothing was saved)
    # Images a tool made this turn (sandboxed Python's plots): {name, content_type,
    # data_base64}; stored as the reply's attachments.
    images: NotRequired[list[dict[str, Any]]]


AgentEvent = ThinkingEvent | TokenEvent | ReasoningEvent | SourcesEvent | FinishedEvent
