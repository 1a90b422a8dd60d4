"""MCP servers: the ones settings name kept in step with the table, and their tool lists.

A server's tools are listed when staff ask (the admin's "Refresh tools"), or the first time
the catalog needs a server never listed; the list is kept on the row, so a turn builds its
tools without asking the server. A tool whose name or schema is malformed is left out (and
named in the row's `error`): one bad tool never breaks the others or a turn.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, transaction
from django.utils import timezone
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.schemas import first_error

from .models import SERVER_NAME_MAX_LENGTH, McpServer

logger = logging.getLogger(__name__)

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
DESCRIPTION_MAX_CHARS = 2000
MAX_TOOLS_PER_SERVER = 100
_synced = False


class ServerSpec(BaseModel):
    """One entry of CHAT_MCP_SERVERS."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_-]+$", max_length=SERVER_NAME_MAX_LENGTH)
    url: str = Field("", pattern=r"^(https?://.+)?$", max_length=500)
    headers: dict[str, str] = Field(default_factory=dict)
    command: str = Field("", max_length=500)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_transport(self) -> ServerSpec:
        if bool(self.url) == bool(self.command):
            raise ValueError("give either url (streamable HTTP) or command (stdio)")
        return self


def settings_servers() -> list[ServerSpec]:
    """Return CHAT_MCP_SERVERS, checked; ImproperlyConfigured names what is wrong."""
    specs = []
    for index, entry in enumerate(settings.CHAT_MCP_SERVERS):
        try:
            specs.append(ServerSpec.model_validate(entry))
        except ValidationError as exc:
            raise ImproperlyConfigured(f"CHAT_MCP_SERVERS[{index}]: {first_error(exc)}") from None
    return specs


@transaction.atomic
def sync_settings_servers() -> None:
    """Make the table's settings rows match CHAT_MCP_SERVERS (a name staff registered in
    the admin is left to the admin's row)."""
    specs = {spec.name: spec for spec in settings_servers()}
    McpServer.objects.filter(source=McpServer.Source.SETTINGS).exclude(name__in=specs).delete()
    for spec in specs.values():
        fields = spec.model_dump(exclude={"name"})
        row = McpServer.objects.filter(name=spec.name).first()
        if row is None:
            try:
                with transaction.atomic():  # another process may be adding it this moment
                    McpServer.objects.create(
                        name=spec.name, source=McpServer.Source.SETTINGS, **fields
                    )
            except IntegrityError:
                pass
        elif row.source == McpServer.Source.SETTINGS and any(
            getattr(row, key) != value for key, value in fields.items()
        ):
            McpServer.objects.filter(pk=row.pk).update(**fields, refreshed_at=None, tools=[])


def list_servers() -> list[McpServer]:
    """Return the enabled servers (settings ones synced once per process)."""
    global _synced
    if not _synced:
        sync_settings_servers()
        _synced = True
    return list(McpServer.objects.filter(enabled=True))


def forget_sync() -> None:
    """Read CHAT_MCP_SERVERS again on next use (tests change settings)."""
    global _synced
    _synced = False


def connection_of(server: McpServer) -> dict[str, Any]:
    """Return the server's connection as langchain-mcp-adapters takes it."""
    if server.url:
        return {
            "transport": "streamable_http",
            "url": server.url,
            "headers": dict(server.headers or {}),
            "timeout": settings.CHAT_MCP_TIMEOUT,
            "sse_read_timeout": settings.CHAT_MCP_TIMEOUT,
        }
    # The child gets the MCP SDK's default environment (PATH, HOME…) and the row's `env`,
    # never this process's own (its secrets).
    return {
        "transport": "stdio",
        "command": server.command,
        "args": list(server.args or []),
        "env": dict(server.env or {}),
    }


def check_tool(tool: Any) -> dict[str, Any]:
    """Return an MCP tool as the row keeps it, or raise ValueError saying what is wrong."""
    name = getattr(tool, "name", None)
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise ValueError(f"tool name {str(name)[:80]!r} is not [A-Za-z0-9_.-]{{1,64}}")
    schema = getattr(tool, "inputSchema", None)
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ValueError(f"{name}: its input schema is not a JSON object schema")
    if not isinstance(schema.get("properties", {}), dict):
        raise ValueError(f"{name}: its schema's properties are not an object")
    description = str(getattr(tool, "description", "") or "")[:DESCRIPTION_MAX_CHARS]
    kept = {"name": name, "description": description, "input_schema": schema}
    try:
        convert_to_openai_tool({"name": name, "description": description, "parameters": schema})
    except Exception as exc:  # what the model would be sent must be buildable
        raise ValueError(f"{name}: {exc}") from None
    return kept


async def alist_tools(server: McpServer) -> tuple[list[dict[str, Any]], list[str]]:
    """Ask a server for its tools; return the sound ones and what was wrong with the rest."""
    from langchain_mcp_adapters.sessions import create_session

    async with asyncio.timeout(settings.CHAT_MCP_TIMEOUT):
        async with create_session(connection_of(server)) as session:
            await session.initialize()
            listed = []
            cursor = None
            while len(listed) < MAX_TOOLS_PER_SERVER:
                page = await session.list_tools(cursor=cursor)
                listed += page.tools
                cursor = page.nextCursor
                if not cursor:
                    break
    tools, problems = [], []
    for tool in listed[:MAX_TOOLS_PER_SERVER]:
        try:
            tools.append(check_tool(tool))
        except ValueError as exc:
            problems.append(str(exc))
    return tools, problems


async def arefresh(server: McpServer) -> McpServer:
    """List a server's tools again and keep them on its row (a failure keeps the old list
    and says why in `error`)."""
    try:
        tools, problems = await alist_tools(server)
    except Exception as exc:  # down, slow, not MCP: staff read why in the admin
        logger.info("MCP server %s could not be listed: %r", server.name, exc)
        error = _why(exc)
        await McpServer.objects.filter(pk=server.pk).aupdate(
            error=error, refreshed_at=timezone.now()
        )
        server.error = error
        return server
    error = ("Left out: " + "; ".join(problems))[:2000] if problems else ""
    await McpServer.objects.filter(pk=server.pk).aupdate(
        tools=tools, error=error, refreshed_at=timezone.now()
    )
    server.tools, server.error = tools, error
    return server


def _why(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return f"No answer within {settings.CHAT_MCP_TIMEOUT:g} s."
    return f"{type(exc).__name__}: {exc}"[:2000]
