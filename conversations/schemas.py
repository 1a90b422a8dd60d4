"""The field types of a conversation and a message, written once from the model's
constants: the API inputs (conversations/api/schemas.py), the socket frames
(conversations/realtime/frames.py) and the import file (transfers/imports.py) all
declare their fields with these, so a limit changes in one place."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import AfterValidator, Field

from core.schemas import Input, Instructions, ModelId, Temperature, Text, one_line

from .models import (
    DESCRIPTION_MAX_LENGTH,
    ID_MAX_LENGTH,
    MAX_ATTACHMENTS,
    PROJECT_NAME_MAX_LENGTH,
    SERVICE_ID_MAX_LENGTH,
    TITLE_MAX_LENGTH,
)

# Core's types, shared with user settings and presets; re-exported here.
__all__ = ["ModelId", "Temperature"]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must hold more than spaces")
    return value


def _printable(value: str) -> str:
    if not value.isprintable():
        raise ValueError("must be printable characters")
    return value


def _distinct(values: list[uuid.UUID]) -> list[uuid.UUID]:
    if len(set(values)) != len(values):
        raise ValueError("must not name an attachment twice")
    return values


def _a_pair(values: list[str]) -> list[str]:
    if values and (len(values) != 2 or len(set(values)) != 2 or not all(values)):
        raise ValueError("must name two different models, or none")
    return values


Title = one_line(max_length=TITLE_MAX_LENGTH)
ProjectName = one_line(max_length=PROJECT_NAME_MAX_LENGTH, min_length=1)
Description = Annotated[Text, Field(max_length=DESCRIPTION_MAX_LENGTH)]
ServiceId = Annotated[Text, Field(max_length=SERVICE_ID_MAX_LENGTH)]
SystemPrompt = Instructions
# A message's words; its length against MESSAGE_MAX_CHARS (a setting, answered with
# `too_long`) is the reply orchestrator's to judge.
MessageText = Annotated[Text, AfterValidator(_not_blank)]
# Ids of rows the client names (messages) and the client's own message id.
ObjectId = Annotated[Text, Field(min_length=1, max_length=ID_MAX_LENGTH)]
ClientId = Annotated[
    Text, Field(min_length=1, max_length=ID_MAX_LENGTH), AfterValidator(_printable)
]
AttachmentIds = Annotated[
    list[uuid.UUID], Field(max_length=MAX_ATTACHMENTS), AfterValidator(_distinct)
]
# Side by side: the two models that answer a message at once (ids GET /models lists).
SideBySide = Annotated[list[ModelId], Field(max_length=2), AfterValidator(_a_pair)]
# How a list of conversations may be sorted (the API, the list page, the search selector).
SortField = Literal["created_at", "updated_at", "last_message_at", "message_count"]
# Store a message although it holds sensitive information (after a `sensitive` error).
ConfirmSensitive = Annotated[bool, Field(strict=True)]


class MessageIn(Input):
    """A message the user sends, or an edit's new text: the API's body and, with its
    `type`, the socket's frame. Its length against MESSAGE_MAX_CHARS is the reply
    orchestrator's to judge (`too_long`, a setting)."""

    content: MessageText
    client_id: ClientId | None = None
    confirm_sensitive: ConfirmSensitive = Field(
        False, description="store it although it holds sensitive information"
    )
    attachments: AttachmentIds = Field(
        default_factory=list, description="ids of this conversation's uploads"
    )
    models: SideBySide = Field(
        default_factory=list, description="two models answering at once, side by side"
    )


def as_json(value: Any) -> Any:
    """A row's value as JSON carries it: ids as text, times in ISO 8601 (UTC)."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


class ConversationOut(Schema):
    """A conversation as the API answers it, frames carry it and pages read it: the one
    list of its outgoing fields (`serializers.conversation_to_dict` writes it)."""

    id: str
    title: str
    description: str
    project_id: int | None
    service_id: str
    status: str
    summary: str
    summary_at: str | None
    parent_conversation_id: str | None
    forked_from_message_id: str | None
    message_count: int
    total_tokens_used: int
    created_by: int | None
    created_at: str | None
    updated_at: str | None
    last_message_at: str | None
    current_message_id: str | None
    model: str = Field(description="blank: the owner's default model, else the site's")
    system_prompt: str
    temperature: float | None
    tools: list[str] | None = Field(description="tool ids on here; null: the owner's default")
    preset_id: str | None = Field(description="the preset it was started from (GET /presets)")
    pinned: bool = Field(description="listed first in the sidebar")
    temporary: bool = Field(
        description="never listed, searched, shared or remembered; deleted when its last"
        " socket closes or a day after its last message"
    )
    is_flagged: bool
    flag_reason: str
