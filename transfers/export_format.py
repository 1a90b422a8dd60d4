"""The export file: one class per object of it, which exports write and imports read.

`GET …/export?format=json` writes these shapes (transfers/exports.py); an import
validates the file with the same classes (transfers/imports.py) before storing
anything, so a field added to a class round-trips by construction.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from ninja import Field
from pydantic import model_validator

from conversations.feedback import COMMENT_MAX_LENGTH
from conversations.models import ID_MAX_LENGTH
from conversations.schemas import (
    Description,
    ModelId,
    ServiceId,
    SystemPrompt,
    Temperature,
    Title,
    as_json,
)
from core.schemas import FormatVersion, Input, JsonObject, Text, Time
from toolbox.tool_catalog import ToolIds

from .import_formats.common import MAX_PARTS

EXPORT_FORMAT = "chatsite.conversation"
EXPORT_VERSION = 1
MAX_SEQUENCE = 2**31 - 1
MAX_MESSAGES = 100_000
MAX_CONTENT_CHARS = 1_000_000
FinishReason = Literal["end_turn", "max_tokens", "stop_sequence", "stopped", "error", "interrupted"]


class ExportedFeedback(Input):
    """The exporter's rating of a reply (exports with metadata carry it)."""

    rating: Literal["up", "down"]
    comment: Text | None = Field("", max_length=COMMENT_MAX_LENGTH)


class ExportedAttachment(Input):
    """A file a message was sent with (exports name them; the bytes travel only in the
    zip bulk export), noted on the imported message."""

    name: Text = Field(..., max_length=255)
    kind: Literal["image", "document"]
    content_type: Text = Field(..., max_length=100)
    size_bytes: int = Field(..., ge=0, le=2**53, strict=True)


class ExportedMessage(Input):
    """One message of an export file: exports write it from a row (`of`), imports read
    it; METADATA are the fields only an export with metadata carries."""

    METADATA: ClassVar[frozenset[str]] = frozenset(
        {"model", "tokens_used", "finish_reason", "metadata", "feedback"}
    )

    id: Text | None = Field(None, max_length=100, description="a new id is made; names it here")
    parent_id: Text | None = Field(
        None, max_length=100, description="the `id` of an earlier message of the file"
    )
    sequence_number: int = Field(..., ge=1, le=MAX_SEQUENCE, strict=True)
    role: Literal["user", "assistant", "system"]
    content: Text | None = Field("", max_length=MAX_CONTENT_CHARS)
    parts: list[JsonObject] = Field(default_factory=list, max_length=MAX_PARTS)
    created_at: Time | None = None
    attachments: list[ExportedAttachment] = Field(default_factory=list, max_length=10)
    model: Text | None = Field("", max_length=100)
    tokens_used: int | None = Field(
        None, ge=0, le=MAX_SEQUENCE, strict=True, description="none given: estimated, and marked"
    )
    finish_reason: FinishReason | None = None
    metadata: JsonObject | None = None
    feedback: ExportedFeedback | None = None

    @classmethod
    def of(cls, row: dict[str, Any], *, include_metadata: bool) -> dict[str, Any]:
        """Return the export's object for a message row (`exports.iter_message_rows`)."""
        data = {
            name: as_json(row.get(name))
            for name in cls.model_fields
            if include_metadata or name not in cls.METADATA
        }
        data["attachments"] = [
            {key: a[key] for key in ExportedAttachment.model_fields} for a in row["attachments"]
        ]
        if include_metadata:
            data["finish_reason"] = row["finish_reason"] or None  # stored blank: none
        return data

    @model_validator(mode="after")
    def _typed_parts(self) -> ExportedMessage:
        if not all(isinstance(part.get("type"), str) for part in self.parts):
            raise ValueError("every part needs a string `type`")
        return self


class ExportedConversation(Input):
    """The conversation of an export file. Exports write it from the row (`of`), imports
    read it (the informational fields, METADATA, are not imported): a field added here
    goes both ways."""

    METADATA: ClassVar[frozenset[str]] = frozenset(
        {
            "id",
            "status",
            "message_count",
            "total_tokens_used",
            "updated_at",
            "last_message_at",
            "parent_conversation_id",
            "forked_from_message_id",
        }
    )

    title: Title | None = ""
    description: Description | None = ""
    service_id: ServiceId | None = ""
    summary: Text | None = Field("", max_length=MAX_CONTENT_CHARS)
    summary_at: Time | None = None
    created_at: Time | None = None
    current_message_id: Text | None = Field(None, max_length=ID_MAX_LENGTH)
    model: ModelId | None = Field("", description="kept when still on offer")
    system_prompt: SystemPrompt | None = ""
    temperature: Temperature | None = None
    pinned: bool | None = Field(False, strict=True)
    tools: ToolIds | None = Field(None, description="kept; those not on offer here are off")
    id: Text | None = Field(None, max_length=ID_MAX_LENGTH)
    status: Text | None = Field(None, max_length=20)
    message_count: int | None = Field(None, ge=0, le=MAX_SEQUENCE)
    total_tokens_used: int | None = Field(None, ge=0, le=2**63 - 1)
    updated_at: Time | None = None
    last_message_at: Time | None = None
    parent_conversation_id: Text | None = Field(None, max_length=ID_MAX_LENGTH)
    forked_from_message_id: Text | None = Field(None, max_length=ID_MAX_LENGTH)

    @classmethod
    def of(cls, conversation: Any, *, include_metadata: bool) -> dict[str, Any]:
        """Return the export's `conversation` object for a row, in field order."""
        return {
            name: as_json(getattr(conversation, name))
            for name in cls.model_fields
            if include_metadata or name not in cls.METADATA
        }


class ExportFile(Input):
    """A JSON export of one conversation (GET …/export?format=json), as import reads it."""

    format: Literal["chatsite.conversation"]
    version: FormatVersion
    exported_at: Time | None = None
    include_metadata: bool | None = None
    conversation: ExportedConversation
    messages: list[ExportedMessage] = Field(..., max_length=MAX_MESSAGES)

    @model_validator(mode="after")
    def _distinct_numbers(self) -> ExportFile:
        numbers = [m.sequence_number for m in self.messages]
        if len(set(numbers)) != len(numbers):
            raise ValueError("every message needs its own sequence_number")
        # A tree: each parent is an earlier message of the file (so there is no cycle).
        seen: set[str] = set()
        for message in sorted(self.messages, key=lambda m: m.sequence_number):
            if message.parent_id is not None and message.parent_id not in seen:
                raise ValueError("parent_id names no earlier message of the file")
            if message.id is not None:
                if message.id in seen:
                    raise ValueError("every message needs its own id")
                seen.add(message.id)
        current = self.conversation.current_message_id
        if current is not None and current not in seen:
            raise ValueError("current_message_id names no message of the file")
        return self
