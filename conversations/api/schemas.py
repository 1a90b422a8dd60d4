"""Request and response shapes of the JSON API (they generate the OpenAPI schema)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Field, Schema
from pydantic import field_validator

from conversations.schemas import (
    ConversationOut,
    Description,
    MessageIn,
    ModelId,
    ObjectId,
    ServiceId,
    SortField,
    SystemPrompt,
    Temperature,
    Title,
)
from conversations.search import MessageHit
from conversations.services import NewConversation
from core.schemas import Input, Text, Time
from toolbox.tool_catalog import ToolIds

MAX_ID = 2**63 - 1

ProjectId = Annotated[int, Field(ge=1, le=MAX_ID)]
Status = Literal["active", "archived", "summarized"]


class ConversationCreatedOut(ConversationOut):
    initial_message_id: str | None = Field(None, description="the stored `initial_message`")
    run_id: str | None = Field(
        None, description="the reply to it, running: also the id its stored message will have"
    )


class ForkRef(Schema):
    id: str
    title: str


class ConversationDetailOut(ConversationOut):
    forks: list[ForkRef]


class ConversationPage(Schema):
    items: list[ConversationOut]
    next_cursor: str | None


class ConversationFilters(Schema):
    q: Text | None = Field(None, max_length=200, description="words in titles or messages")
    status: Status | None = None
    project_id: ProjectId | None = None
    service_id: ServiceId | None = None
    created_after: Time | None = None
    created_before: Time | None = None
    sort: SortField = "updated_at"
    order: Literal["asc", "desc"] = "desc"
    limit: int = Field(50, ge=1, le=200)
    cursor: Text | None = Field(None, max_length=1000)


class MessageSendIn(MessageIn):
    """A message to send."""


class ConversationCreateIn(Input):
    title: Title = ""
    description: Description = ""
    project_id: ProjectId | None = None
    service_id: ServiceId = ""
    model: ModelId = ""
    system_prompt: SystemPrompt = ""
    temperature: Temperature | None = None
    temporary: bool = Field(
        False,
        strict=True,
        description="never listed, searched, shared or remembered; set only at creation",
    )
    preset_id: uuid.UUID | None = Field(
        None, description="start from this preset (yours or a shared one; GET /presets)"
    )
    initial_message: MessageSendIn | None = Field(
        None,
        description="stored as the first message with the conversation (a refused message"
        " creates no conversation); the reply runs in the background as for `message.send`."
        " A bare string is taken as its `content`.",
    )

    def new_conversation(self) -> NewConversation:
        """Return the conversation to create (its first message aside)."""
        fields = self.dict(exclude={"initial_message", "project_id", "preset_id"})
        return NewConversation(**fields, project=self.project_id, preset=self.preset_id)

    @field_validator("initial_message", mode="before")
    @classmethod
    def _content_alone(cls, value: Any) -> Any:
        return {"content": value} if isinstance(value, str) else value


class ConversationPatchIn(Input):
    title: Title | None = None
    description: Description | None = None
    status: Status | None = None
    project_id: ProjectId | None = None
    service_id: ServiceId | None = None
    model: ModelId | None = None
    system_prompt: SystemPrompt | None = None
    temperature: Temperature | None = Field(None, description="null: the model's default")
    pinned: bool | None = Field(None, strict=True, description="listed first in the sidebar")
    tools: ToolIds | None = Field(None, description="tool ids (GET /tools); null: your default")
    current_message_id: ObjectId | None = Field(
        None, description="show the branch through this message (as POST …/switch)"
    )


class AttachmentOut(Schema):
    id: str
    name: str
    kind: Literal["image", "document"]
    content_type: str
    size_bytes: int
    url: str


class FeedbackState(Schema):
    rating: Literal["up", "down"]
    comment: str


class MessageOut(Schema):
    id: str
    conversation_id: str
    role: str
    content: str
    parts: list[Any]
    model: str
    tokens_used: int
    finish_reason: str | None
    metadata: dict[str, Any]
    sequence_number: int
    parent_id: str | None
    sibling_ids: list[str]
    run_id: str | None
    client_id: str | None
    created_by: int | None
    created_at: str | None
    is_flagged: bool
    feedback: FeedbackState | None = Field(None, description="the requesting user's rating")
    attachments: list[AttachmentOut] = Field(default_factory=list)


class MessagePage(Schema):
    items: list[MessageOut]
    next_cursor: str | None


class ReplyOut(Schema):
    user_message: MessageOut
    assistant_message: MessageOut | None
    # Every stored reply: the one above, or both of a side-by-side pair (by model).
    assistant_messages: list[MessageOut] = []


class AssistantReplyOut(Schema):
    assistant_message: MessageOut | None


class RegenerateIn(Input):
    model: ModelId | None = Field(None, description="answer with this model, this once")


class EditIn(MessageIn):
    """An edited message: a new sibling of the one edited."""


class SwitchIn(Input):
    message_id: ObjectId


class ForkIn(Input):
    from_message_id: ObjectId
    title: Title | None = None


class SummarizeIn(Input):
    max_length: int | None = Field(None, ge=10, le=2000, description="words")


class SearchPage(Schema):
    items: list[MessageHit]
    next_cursor: str | None


FeedbackReason = Literal[
    "incorrect", "not_helpful", "ignored_instructions", "unsafe", "too_long", "too_short"
]


class FeedbackIn(Input):
    rating: Literal["up", "down"]
    comment: Text = Field("", max_length=2000)
    reasons: list[FeedbackReason] = Field(default_factory=list, max_length=6)


class FeedbackOut(Schema):
    message_id: str
    rating: str
    comment: str
    reasons: list[str]
    updated_at: datetime


class ReportIn(Input):
    reason: Text = Field("", max_length=500)


class ReportOut(Schema):
    message_id: str
    is_flagged: bool
    flag_reason: str


class BulkIn(Input):
    action: Literal["archive", "delete", "export"]
    ids: list[Text] = Field(..., min_length=1, max_length=500)
    format: Literal["markdown", "json", "text"] = "json"
    include_metadata: bool = False


class BulkOut(Schema):
    action: str
    count: int


class MessageListParams(Schema):
    after: int | None = Field(None, ge=0, le=2**31 - 1, description="sequence number")
    before: int | None = Field(None, ge=0, le=2**31 - 1, description="sequence number")
    limit: int = Field(50, ge=1, le=200)
    cursor: Text | None = Field(None, max_length=20, description="next_cursor of a page")
    branch: Literal["current", "all"] = Field(
        "current", description="the current branch, or every message in creation order"
    )
    role: Literal["user", "assistant", "system"] | None = Field(None, description="only this role")
    part: Literal["thinking", "tool_call", "tool_result", "references"] | None = Field(
        None, description="only messages holding a part of this type"
    )
    has_tool: bool | None = Field(
        None, description="only messages that called (or did not call) a tool"
    )


class SearchParams(Schema):
    q: Text = Field(..., min_length=1, max_length=200)
    limit: int = Field(20, ge=1, le=100)
    cursor: Text | None = Field(None, max_length=1000)
    role: Literal["user", "assistant", "system"] | None = Field(None, description="only this role")
    after: Time | None = Field(None, description="written at or after this time")
    before: Time | None = Field(None, description="written before this time")
