"""`/me/settings`: the user's default model, custom instructions and memory switch."""

from __future__ import annotations

from typing import Annotated

from django.http import HttpRequest
from ninja import Field, Router, Schema
from pydantic import StrictBool

from core.schemas import Input, ModelId, Text, errors
from toolbox.catalog import ToolIds

from .preferences import (
    INSTRUCTIONS_MAX_CHARS,
    get_user_settings,
    update_user_settings,
    user_settings_to_dict,
)

router = Router(tags=["settings"])


ERRORS = errors(400, 401, 422, 429)


class UserSettingsOut(Schema):
    default_model: str = Field(description="blank: the site's default model")
    custom_instructions: str = Field(description="added to every conversation's instructions")
    memory_enabled: bool = Field(description="memories across conversations: recalled and saved")
    tools_enabled: list[str] = Field(description="tool ids on in new conversations (GET /tools)")


class UserSettingsPatchIn(Input):
    default_model: ModelId | None = Field(None, description="an id GET /models lists, or blank")
    custom_instructions: Annotated[Text, Field(max_length=INSTRUCTIONS_MAX_CHARS)] | None = None
    memory_enabled: StrictBool | None = None
    tools_enabled: ToolIds | None = Field(None, description="ids GET /tools lists")


@router.get("/me/settings", response={200: UserSettingsOut, **ERRORS})
def read_settings(request: HttpRequest):
    """Read your default model, custom instructions and whether memory is on."""
    return user_settings_to_dict(get_user_settings(user=request.auth))


@router.patch("/me/settings", response={200: UserSettingsOut, **ERRORS})
def change_settings(request: HttpRequest, payload: UserSettingsPatchIn):
    """Change your default model (an unknown one → 422), custom instructions and/or memory."""
    changes = {k: v for k, v in payload.dict(exclude_unset=True).items() if v is not None}
    return user_settings_to_dict(update_user_settings(user=request.auth, **changes))
