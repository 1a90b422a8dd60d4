"""Which tools there are, which are on for a conversation, and the LangChain tools of a turn.

Tool ids (SPEC: Tools): the built-ins keep their names (`web_search`, `read_url`,
`python`); an MCP server's tool is `mcp:<server>:<tool>`. What is on for a conversation:
its own list (`Conversation.tools`), else its owner's (`UserSettings.tools_enabled`), else
the site's defaults (the web tools when a search provider is configured, Python when staff
switched the sandbox on; MCP tools are off until a user turns them on).
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from langchain_core.tools import BaseTool
from pydantic import Field

from core.errors import Invalid
from core.schemas import Text

from .models import McpServer
from .servers import connection_of

MCP_PREFIX = "mcp:"
FUNCTION_NAME = re.compile(r"[^A-Za-z0-9_-]")
BUILTIN_NAMES = {
    "web_search": _("Web search"),
    "read_url": _("Read a web page"),
    "python": _("Python (sandboxed)"),
    "image": _("Pictures"),
}
BUILTIN_DESCRIPTIONS = {
    "web_search": _("Searches the web and cites the pages it used."),
    "read_url": _("Reads a public web page the conversation names."),
    "python": _("Runs Python code without network access, in a sandbox."),
    "image": _("Draws a picture from a description (counted against your budget)."),
}
MAX_TOOLS_ON = 64
WATCH_SECONDS = 1.0  # how often a running HTTP tool call checks that its server is there
# A list of tool ids as the API, the settings and the export file take it.
ToolIds = Annotated[
    list[Annotated[Text, Field(min_length=1, max_length=200)]], Field(max_length=MAX_TOOLS_ON)
]


@dataclass(frozen=True)
class ToolInfo:
    """A tool a user may switch on."""

    id: str
    name: str
    description: str
    server: str | None = None


def mcp_id(server: str, tool: str) -> str:
    return f"{MCP_PREFIX}{server}:{tool}"


def builtin_ids() -> list[str]:
    """Return the built-in tools this site offers (of agent.tools.CONFIGURED_TOOLS)."""
    ids = ["web_search"] if settings.WEB_SEARCH_URL else []
    ids.append("read_url")
    if settings.CHAT_PYTHON_SANDBOX:
        ids.append("python")
    if settings.CHAT_IMAGE_MODEL:
        ids.append("image")
    return ids


def default_ids() -> list[str]:
    """Return the tools on for someone who never chose: the configured built-ins."""
    ids = ["web_search", "read_url"] if settings.WEB_SEARCH_URL else []
    if settings.CHAT_PYTHON_SANDBOX:
        ids.append("python")
    if settings.CHAT_IMAGE_MODEL:
        ids.append("image")
    return ids


def available(servers: Iterable[McpServer]) -> list[ToolInfo]:
    """Return every tool on offer: the built-ins, then each enabled server's listed tools."""
    tools = [
        ToolInfo(i, str(BUILTIN_NAMES[i]), str(BUILTIN_DESCRIPTIONS[i])) for i in builtin_ids()
    ]
    for server in servers:
        for tool in server.tools or []:
            tools.append(
                ToolInfo(
                    mcp_id(server.name, tool["name"]),
                    tool["name"],
                    tool.get("description", ""),
                    server.name,
                )
            )
    return tools


def menu(offered: Sequence[ToolInfo], on: Iterable[str]) -> dict[str, Any]:
    """Return the tools grouped by server (built-ins first) with whether each is on, and
    the ones on."""
    on = set(on)
    groups: dict[str, list[dict[str, Any]]] = {}
    for tool in offered:
        groups.setdefault(tool.server or "", []).append({**tool.__dict__, "on": tool.id in on})
    return {"groups": sorted(groups.items()), "on": [t for t in offered if t.id in on]}


def enabled_ids(*, conversation_tools: Any, user_tools: Any) -> list[str]:
    """Return the ids on for a conversation (not yet checked against what is on offer)."""
    if conversation_tools is not None:
        return list(conversation_tools)
    if user_tools is not None:
        return list(user_tools)
    return default_ids()


def check_ids(ids: Sequence[str], servers: Iterable[McpServer]) -> list[str]:
    """Return `ids` (distinct, in order) if each is on offer; else Invalid naming one."""
    offered = {tool.id for tool in available(servers)}
    unknown = [i for i in ids if i not in offered]
    if unknown:
        raise Invalid(
            gettext("Unknown tool: %(tool)s (GET /api/v1/tools lists them).")
            % {"tool": unknown[0][:100]}
        )
    return list(dict.fromkeys(ids))


def build_tools(
    ids: Sequence[str], servers: Iterable[McpServer], *, owner: str | None = None
) -> list[BaseTool]:
    """Return the LangChain tools of `ids` that are on offer (others are skipped: a server
    taken away since, a provider no longer configured); `owner`: whose turn it is (their
    Python runs wait for each other)."""
    wanted = set(ids)
    tools: list[BaseTool] = []
    if wanted & {"web_search", "read_url"}:
        from agent.tools.web import make_web_tools

        web = make_web_tools(
            search_url=settings.WEB_SEARCH_URL, fetch_allow=settings.CHAT_FETCH_ALLOW
        )
        tools += [t for t in web if t.name in wanted]
    if "python" in wanted and settings.CHAT_PYTHON_SANDBOX:
        from agent.tools.python_sandbox import make_python_tool

        tools.append(make_python_tool(owner=owner))
    if "image" in wanted and settings.CHAT_IMAGE_MODEL:
        from agent.tools.images import make_image_tool

        tools.append(
            make_image_tool(
                base_url=settings.OPENAI_BASE_URL,
                api_key=settings.OPENAI_API_KEY,
                model=settings.CHAT_IMAGE_MODEL,
            )
        )
    names = {t.name for t in tools}
    for server in servers:
        for listed in server.tools or []:
            if mcp_id(server.name, listed["name"]) not in wanted:
                continue
            tool = mcp_tool(server, listed)
            if tool.name not in names:  # two ids that read the same to a model: the first
                names.add(tool.name)
                tools.append(tool)
    return tools


def function_name(server: str, tool: str) -> str:
    """Return the name the model calls an MCP tool by: `<server>__<tool>`, namespaced so
    two servers' same-named tools never collide (OpenAI's [A-Za-z0-9_-]{1,64})."""
    return FUNCTION_NAME.sub("_", f"{server}__{tool}")[:64]


def mcp_tool(server: McpServer, listed: dict[str, Any]) -> BaseTool:
    """Return a listed MCP tool as a LangChain tool; each call opens its own session."""
    from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
    from mcp.types import Tool

    spec = Tool(
        name=listed["name"],
        description=listed.get("description") or "",
        inputSchema=listed["input_schema"],
    )
    tool = convert_mcp_tool_to_langchain_tool(
        None, spec, connection=connection_of(server), server_name=server.name
    )
    tool.name = function_name(server.name, listed["name"])
    tool.metadata = {
        "server": server.name,
        "tool": listed["name"],
        "timeout": settings.CHAT_MCP_TIMEOUT,
    }
    if server.url:
        tool.coroutine = _watched(tool.coroutine, server.url, server.name)
    return tool


def _watched(call: Callable[..., Awaitable[Any]], url: str, name: str):
    """Wrap an HTTP server's tool call so that a server that dies mid-call fails the call
    within about a second (the MCP client would wait out its read timeout)."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)

    @functools.wraps(call)
    async def watched(*args: Any, **kwargs: Any) -> Any:
        task = asyncio.ensure_future(call(*args, **kwargs))
        try:
            while True:
                done, _pending = await asyncio.wait({task}, timeout=WATCH_SECONDS)
                if done:
                    return task.result()
                if not await _answers(host, port):
                    raise ConnectionError(f"the MCP server {name} went away")
        finally:
            task.cancel()

    return watched


async def _answers(host: str, port: int) -> bool:
    """Say whether something still accepts connections at host:port."""
    try:
        async with asyncio.timeout(WATCH_SECONDS):
            _reader, writer = await asyncio.open_connection(host, port)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True
