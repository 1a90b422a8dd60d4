"""A prompt as the API, the prompts page and the composer read and write it."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from ninja import Schema
from pydantic import Field

from core.schemas import Input, Text, one_line

from .models import (
    COMMAND_MAX_LENGTH,
    COMMAND_PATTERN,
    CONTENT_MAX_LENGTH,
    TITLE_MAX_LENGTH,
    Prompt,
)

Command = Annotated[
    str,
    Field(
        pattern=COMMAND_PATTERN,
        max_length=COMMAND_MAX_LENGTH,
        description="what follows `/` in the composer: a-z, 0-9 and `-`, 32 at most",
    ),
]
PromptTitle = one_line(max_length=TITLE_MAX_LENGTH, min_length=1)
PromptText = Annotated[
    Text,
    Field(min_length=1, max_length=CONTENT_MAX_LENGTH, description="`{{name}}` marks a variable"),
]


class PromptIn(Input):
    command: Command
    title: PromptTitle
    content: PromptText
    shared: bool = Field(False, strict=True, description="everyone may use it; staff only")


class PromptPatchIn(Input):
    """The fields to change (omitted: unchanged)."""

    command: Command = None
    title: PromptTitle = None
    content: PromptText = None
    shared: bool = Field(None, strict=True)


class PromptOut(Schema):
    id: str
    command: str
    title: str
    content: str
    variables: list[str] = Field(description="its `{{variables}}`, each once, in order")
    shared: bool
    owner_is_me: bool
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, prompt: Prompt, *, user_id: int) -> PromptOut:
        """Return `prompt` as the user `user_id` sees it."""
        return cls(
            id=str(prompt.pk),
            command=prompt.command,
            title=prompt.title,
            content=prompt.content,
            variables=prompt.variables,
            shared=prompt.shared,
            owner_is_me=prompt.owner_id == user_id,
            created_at=prompt.created_at,
            updated_at=prompt.updated_at,
        )


class PromptPage(Schema):
    items: list[PromptOut]
    next_cursor: str | None = None
