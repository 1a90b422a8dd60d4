"""A prompt as the API, the prompts page and the composer read and write it."""

from __future__ import annotations

from typing import Annotated

from ninja import Schema
from pydantic import Field

from core.schemas import Input, Text, one_line
from core.shared_rows import SharedRowOut

from .models import (
    COMMAND_MAX_LENGTH,
    COMMAND_PATTERN,
    CONTENT_MAX_LENGTH,
    TITLE_MAX_LENGTH,
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


class PromptOut(SharedRowOut):
    command: str
    title: str
    content: str
    variables: list[str] = Field(description="its `{{variables}}`, each once, in order")


class PromptPage(Schema):
    items: list[PromptOut]
    next_cursor: str | None = None
