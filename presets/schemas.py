"""A preset as the API, the presets page and the landing read and write it (SPEC "Presets")."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import Field, model_validator

from core.schemas import Input, Instructions, ModelId, Temperature, one_line
from core.shared_rows import SharedRowOut
from toolbox.tool_catalog import ToolIds

from .models import (
    ICON_MAX_LENGTH,
    MAX_KNOWLEDGE_IDS,
    MAX_STARTERS,
    NAME_MAX_LENGTH,
    STARTER_MAX_LENGTH,
    Preset,
)

PresetName = one_line(max_length=NAME_MAX_LENGTH, min_length=1)
Icon = one_line(max_length=ICON_MAX_LENGTH)
Starter = one_line(max_length=STARTER_MAX_LENGTH, min_length=1)
Starters = Annotated[list[Starter], Field(max_length=MAX_STARTERS)]


class Knowledge(Input):
    """What the preset's conversations search: all the user's documents, the files of one
    of their projects (`ids`: that project), or chosen documents (`ids`: theirs)."""

    scope: Literal["all", "project", "documents"] = "all"
    ids: list[Annotated[int, Field(ge=1, le=2**63 - 1)] | uuid.UUID] = Field(
        default_factory=list, max_length=MAX_KNOWLEDGE_IDS
    )

    @model_validator(mode="after")
    def _ids_fit_the_scope(self) -> Knowledge:
        if len(set(self.ids)) != len(self.ids):
            raise ValueError("ids must not name a document twice")
        if self.scope == "all" and self.ids:
            raise ValueError('scope "all" takes no ids')
        if self.scope == "project" and not (len(self.ids) == 1 and isinstance(self.ids[0], int)):
            raise ValueError('scope "project" takes the one project\'s id (a number)')
        documents = all(isinstance(i, uuid.UUID) for i in self.ids)
        if self.scope == "documents" and not (self.ids and documents):
            raise ValueError('scope "documents" takes document ids (at least one)')
        return self


class PresetIn(Input):
    name: PresetName
    icon: Icon = ""
    instructions: Instructions = ""
    model: ModelId = ""
    temperature: Temperature | None = None
    tools: ToolIds | None = Field(None, description="tool ids (GET /tools); null: your default")
    knowledge: Knowledge = Field(default_factory=Knowledge)
    starters: Starters = Field(default_factory=list)
    shared: bool = Field(False, strict=True, description="everyone sees it; staff only")


class PresetPatchIn(Input):
    """The fields to change (omitted: unchanged; only `temperature` and `tools` take null)."""

    name: PresetName = None
    icon: Icon = None
    instructions: Instructions = None
    model: ModelId = None
    temperature: Temperature | None = None
    tools: ToolIds | None = None
    knowledge: Knowledge = None
    starters: Starters = None
    shared: bool = Field(None, strict=True)


class PresetOut(SharedRowOut):
    name: str
    icon: str
    instructions: str
    model: str = Field(description="blank: your default model")
    temperature: float | None
    tools: list[str] | None = Field(description="null: your default tools")
    knowledge: Knowledge
    starters: list[str]

    @classmethod
    def fields_of(cls, preset: Preset) -> dict[str, Any]:
        return {"knowledge": Knowledge(scope=preset.knowledge_scope, ids=preset.knowledge_ids)}


class PresetPage(Schema):
    items: list[PresetOut]
    next_cursor: str | None = None
