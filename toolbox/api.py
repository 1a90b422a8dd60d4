"""`GET /tools`: the tools a user may switch on, and which are on by default (SPEC: Tools)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Field, Router, Schema

from accounts.preferences import get_user_settings
from core.db_async import db_async
from core.schemas import errors

from . import catalog
from .servers import arefresh, list_servers

router = Router(tags=["tools"])
ERRORS = errors(401, 429)


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


@router.get("/tools", response={200: ToolPage, **ERRORS})
async def list_tools(request: HttpRequest):
    """List the tools on offer: the built-ins, then each MCP server's (a server never asked
    is asked now, within CHAT_MCP_TIMEOUT; one that does not answer lists nothing)."""
    servers = await _alist_servers()
    servers = [s if s.refreshed_at else await arefresh(s) for s in servers]
    found = await _aget_user_settings(user=request.auth)
    on = set(catalog.enabled_ids(conversation_tools=None, user_tools=found.tools_enabled))
    items = [{**tool.__dict__, "enabled": tool.id in on} for tool in catalog.available(servers)]
    return {"items": items, "next_cursor": None}
