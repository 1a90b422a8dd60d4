"""`/me/settings` (default model, custom instructions, memory, tools) and `/tools`: the
tools a user may switch on (SPEC: Tools)."""

from __future__ import annotations

import asyncio
from typing import Literal

from django.http import HttpRequest
from ninja import Field, Router, Schema
from pydantic import StrictBool

from core.db_async import db_async
from core.schemas import Input, Instructions, ModelId, errors
from toolbox import tool_catalog
from toolbox.models import McpServer
from toolbox.servers import arefresh, list_servers
from toolbox.tool_catalog import ToolIds

from .preferences import (
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
    theme: Literal["system", "light", "dark"] = Field(description="the pages' colours")
    stt: bool = Field(description="dictation is on (CHAT_STT_MODEL): POST /audio/transcriptions")
    tts: bool = Field(description="the server reads aloud (CHAT_TTS_MODEL); else the browser")


class UserSettingsPatchIn(Input):
    default_model: ModelId | None = Field(None, description="an id GET /models lists, or blank")
    custom_instructions: Instructions | None = None
    memory_enabled: StrictBool | None = None
    tools_enabled: ToolIds | None = Field(None, description="ids GET /tools lists")
    theme: Literal["system", "light", "dark"] | None = None


@router.get("/me/settings", response={200: UserSettingsOut, **ERRORS})
def read_settings(request: HttpRequest):
    """Read your default model, custom instructions and whether memory is on."""
    return user_settings_to_dict(get_user_settings(user=request.auth))


@router.patch("/me/settings", response={200: UserSettingsOut, **ERRORS})
def change_settings(request: HttpRequest, payload: UserSettingsPatchIn):
    """Change your default model (an unknown one → 422), custom instructions and/or memory."""
    changes = {k: v for k, v in payload.dict(exclude_unset=True).items() if v is not None}
    return user_settings_to_dict(update_user_settings(user=request.auth, **changes))


class ToolOut(Schema):
    id: str = Field(description="web_search, read_url, python, or mcp:<server>:<tool>")
    name: str
    description: str
    server: str | None = Field(description="the MCP server offering it; null: built in")
    enabled: bool = Field(description="on in your new conversations (PATCH /me/settings)")


class ToolPage(Schema):
    items: list[ToolOut]
    next_cursor: str | None = None


_alist_servers = db_async(list_servers)
_aget_user_settings = db_async(get_user_settings)


async def _listed(server: McpServer) -> McpServer:
    return server if server.refreshed_at else await arefresh(server)


@router.get("/tools", response={200: ToolPage, **ERRORS})
async def list_tools(request: HttpRequest):
    """List the tools on offer: the built-ins, then each MCP server's (a server never asked
    is asked now, within CHAT_MCP_TIMEOUT; one that does not answer lists nothing)."""
    servers = await _alist_servers()
    # Asked together: several servers that do not answer cost one timeout, not one each.
    servers = list(await asyncio.gather(*(_listed(server) for server in servers)))
    found = await _aget_user_settings(user=request.auth)
    on = set(tool_catalog.enabled_ids(conversation_tools=None, user_tools=found.tools_enabled))
    items = [
        {**tool.__dict__, "enabled": tool.id in on} for tool in tool_catalog.available(servers)
    ]
    return {"items": items, "next_cursor": None}
