"""Websocket frames in both directions (SPEC: WebSocket), as TypedDicts.

Server frames are built only by the typed builders in `conversations/events.py`.
`CLIENT_FRAME_TYPES` and `SERVER_FRAME_TYPES` are read off the two unions below, so a new
frame is one class and one union entry; the consumer and the socket fuzzer import them.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, NotRequired, TypedDict, get_args, get_type_hints

import orjson
from pydantic import Field, TypeAdapter

from conversations.schemas import MessageIn, ModelId, ObjectId
from core.schemas import Input

# `unavailable`: the reply failed because the conversation's memory (its checkpoints, the
# database) could not be reached; try again later. `llm_unavailable`: the model failed.
ErrorCode = Literal[
    "invalid",
    "too_long",
    "rate_limited",
    "busy",
    "llm_unavailable",
    "unavailable",
    "not_found",
    "sensitive",
    "budget_exceeded",  # the monthly token budget is used up (usage/); see `retry_after`
]

# Frame sizes. Daphne, like most websocket clients (python-websockets, gorilla), refuses a
# message over 1 MiB, so every frame the server sends stays well under it: a reply's text
# travels in pieces, a long message is abridged (the client reads it whole over HTTP),
# and `sync.state` answers a page at a time.
MAX_FRAME_BYTES = 1024 * 1024
TOKEN_FRAME_CHARS = 32 * 1024  # ≤ 192 KiB even if JSON escapes every character
REASONING_SYNC_CHARS = 16 * 1024  # the reasoning so far in a `sync.state` (≤ 96 KiB)
MESSAGE_FRAME_BYTES = 256 * 1024  # one message inside a frame
SYNC_PAGE_BYTES = 448 * 1024  # the messages of one `sync.state` (+ one message + text)


# --- client → server -----------------------------------------------------------
# Validated by pydantic (the same field types as the API); unknown fields are refused.
# A message frame is the API's message body (conversations/schemas.MessageIn) + `type`.
class MessageSendFrame(MessageIn):
    type: Literal["message.send"]


class GenerationStopFrame(Input):
    type: Literal["generation.stop"]


class SyncFrame(Input):
    type: Literal["sync"]
    after: int = Field(..., ge=0, le=2**31 - 1, strict=True)


class PingFrame(Input):
    type: Literal["ping"]


class MessageRegenerateFrame(Input):
    type: Literal["message.regenerate"]
    message_id: ObjectId
    model: ModelId | None = None  # this reply only (GET /models)


class MessageEditFrame(MessageIn):
    type: Literal["message.edit"]
    message_id: ObjectId


class MessageContinueFrame(Input):
    type: Literal["message.continue"]
    message_id: ObjectId


class BranchSwitchFrame(Input):
    type: Literal["branch.switch"]
    message_id: ObjectId


ClientFrame = Annotated[
    MessageSendFrame
    | GenerationStopFrame
    | SyncFrame
    | PingFrame
    | MessageRegenerateFrame
    | MessageEditFrame
    | MessageContinueFrame
    | BranchSwitchFrame,
    Field(discriminator="type"),
]
CLIENT_FRAME = TypeAdapter(ClientFrame)
CLIENT_FRAMES: tuple[type[Input], ...] = get_args(get_args(ClientFrame)[0])
CLIENT_FRAME_TYPES: tuple[str, ...] = tuple(
    get_args(frame.model_fields["type"].annotation)[0] for frame in CLIENT_FRAMES
)


# --- server → client -----------------------------------------------------------
class MessageCreatedFrame(TypedDict):
    type: Literal["message.created"]
    message: dict[str, Any]


class GenerationStartedFrame(TypedDict):
    type: Literal["generation.started"]
    run_id: str
    reply_to: str
    continues: NotRequired[str]  # a continue: the cut-off reply whose text comes first
    text_offset: NotRequired[int]  # …and its length, the first token's index
    model: NotRequired[str]  # a model other than the conversation's (side by side)


class ThinkingFrame(TypedDict):
    type: Literal["thinking"]
    run_id: str
    step: str  # route, retrieve, memory, tool_call, tool_result, generate
    code: str  # agent/steps.py's code: clients translate it (static/js/steps.js)
    params: dict[str, Any]
    content: str  # the step in plain English


class TokenFrame(TypedDict):
    type: Literal["token"]
    run_id: str
    index: int  # character offset of `text` in the reply
    text: str


class ReasoningFrame(TypedDict):
    type: Literal["reasoning"]
    run_id: str
    index: int  # character offset of `text` in the reply's reasoning
    text: str


class SourcesFrame(TypedDict):
    type: Literal["sources"]
    run_id: str
    items: list[dict[str, Any]]


class Usage(TypedDict):
    input_tokens: int
    output_tokens: int


class GenerationFinishedFrame(TypedDict):
    type: Literal["generation.finished"]
    run_id: str
    message: dict[str, Any]
    finish_reason: str
    usage: Usage


class ConversationUpdatedFrame(TypedDict):
    type: Literal["conversation.updated"]
    conversation: dict[str, Any]


class ConversationDeletedFrame(TypedDict):
    type: Literal["conversation.deleted"]
    conversation_id: str


class MessageDeletedFrame(TypedDict):
    type: Literal["message.deleted"]
    message_id: str
    conversation_id: str
    sequence_number: int


class Generation(TypedDict):
    run_id: str
    text: str
    reasoning: NotRequired[str]  # the model's reasoning so far (SPEC "Model servers")
    reply_to: NotRequired[str]  # the message it answers
    model: NotRequired[str]  # as generation.started names it


class SyncStateFrame(TypedDict):
    type: Literal["sync.state"]
    messages: list[dict[str, Any]]
    generation: Generation | None  # the first of `generations` (older clients read it)
    generations: list[Generation]  # every reply in progress: one, or a side-by-side pair
    current_message_id: str | None
    # More messages follow: ask again with `after` = the last one's sequence number.
    has_more: bool


class ErrorFrame(TypedDict):
    type: Literal["error"]
    code: ErrorCode
    detail: str
    retry_after: NotRequired[int]
    findings: NotRequired[list[dict[str, Any]]]  # `sensitive`: {kind, start, end}
    can_confirm: NotRequired[bool]  # `sensitive`: a resend with confirm_sensitive stores it


class PongFrame(TypedDict):
    type: Literal["pong"]


ServerFrame = (
    MessageCreatedFrame
    | GenerationStartedFrame
    | ThinkingFrame
    | TokenFrame
    | ReasoningFrame
    | SourcesFrame
    | GenerationFinishedFrame
    | ConversationUpdatedFrame
    | ConversationDeletedFrame
    | MessageDeletedFrame
    | SyncStateFrame
    | ErrorFrame
    | PongFrame
)
SERVER_FRAME_TYPES: frozenset[str] = frozenset(
    get_args(get_type_hints(frame)["type"])[0] for frame in get_args(ServerFrame)
)


def dumps(frame: Any) -> str:
    """Serialize a frame as compact UTF-8 JSON (Korean stays readable).

    orjson writes what `json.dumps(ensure_ascii=False, separators=(",", ":"))` writes, ~10x
    faster (a frame per token per socket); what it refuses (a lone surrogate, an integer
    past 64 bits, a key that is not a string) goes through json as before.
    """
    try:
        return orjson.dumps(frame).decode()
    except TypeError:
        return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


def abridged(message: dict[str, Any]) -> dict[str, Any]:
    """Return a message as it fits in a frame: whole, or its text cut, its parts and
    metadata left out, and `truncated: true` (the client reads it whole over HTTP)."""
    if len(dumps(message).encode()) <= MESSAGE_FRAME_BYTES:
        return message
    slim = {**message, "content": "", "parts": [], "metadata": {}, "truncated": True}
    room = MESSAGE_FRAME_BYTES - len(dumps(slim).encode())
    content = message["content"]
    encoded = len(dumps(content).encode())
    slim["content"] = content[: max(0, int(len(content) * room / max(encoded, 1) * 0.95))]
    return slim
