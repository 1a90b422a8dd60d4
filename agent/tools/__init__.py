"""Tools the agent may call; each docstring is what the model reads."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from agent.capabilities import supports_tools
from agent.state import AgentContext
from agent.tools.calculator import calculator
from agent.tools.clock import get_current_datetime
from agent.tools.memory import forget, remember
from agent.tools.search import (
    CONTEXT_KEY,
    get_document_section,
    search_conversations,
    search_documents,
)

TOOLS: dict[str, BaseTool] = {
    t.name: t
    for t in (
        calculator,
        get_current_datetime,
        search_documents,
        get_document_section,
        search_conversations,
        remember,
        forget,
    )
}

# Built-ins a site switches on by configuration (a search provider, the sandbox, an image
# model): built per turn with their settings (agent/tools/web.py, python_sandbox.py,
# images.py) and handed
# in as `AgentContext.extra_tools`, as MCP servers' tools are.
# Their ids (toolbox/tool_catalog.py) and the names the model calls them by.
CONFIGURED_TOOLS = {
    "web_search": "web_search",
    "read_url": "read_url",
    "python": "python",
    "image": "generate_image",
}

__all__ = ["CONFIGURED_TOOLS", "CONTEXT_KEY", "TOOLS", "tool_schemas_json", "tools_for"]


def tools_for(context: AgentContext) -> list[BaseTool]:
    """Return the tools that make sense for this run (search only when it can find, memory
    only when it is on, then the ones switched on for the conversation; none for a model
    whose server refuses tools). A switched-on tool never shadows a built-in one."""
    if not supports_tools(context.config):
        return []
    chosen = [calculator, get_current_datetime]
    if context.has_documents:
        chosen.append(search_documents)
        if context.section_lookup is not None:
            chosen.append(get_document_section)
    if context.search_conversations is not None:
        chosen.append(search_conversations)
    if context.memory is not None:
        chosen += [remember, forget]
    taken = {t.name for t in chosen}
    chosen += [t for t in context.extra_tools if t.name not in taken]
    return chosen


def tool_schemas_json(tools: Sequence[BaseTool]) -> str:
    """Return the tools' OpenAI schemas as the JSON a request carries (built once per set)."""
    names = tuple(t.name for t in tools)
    if all(TOOLS.get(name) is tool for name, tool in zip(names, tools, strict=True)):
        return _schemas_json(names)
    return json.dumps([convert_to_openai_tool(t) for t in tools])


@lru_cache(maxsize=64)
def _schemas_json(names: tuple[str, ...]) -> str:
    # Pydantic builds each schema anew on every call: a few milliseconds per turn.
    return json.dumps([convert_to_openai_tool(TOOLS[name]) for name in names])
