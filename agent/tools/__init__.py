"""Tools the agent may call; each docstring is what the model reads."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from agent.state import AgentContext
from agent.tools.calculator import calculator
from agent.tools.clock import get_current_datetime
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
    )
}

__all__ = ["CONTEXT_KEY", "TOOLS", "tools_for"]


def tools_for(context: AgentContext) -> list[BaseTool]:
    """Return the tools that make sense for this run (search only when it can find)."""
    chosen = [calculator, get_current_datetime]
    if context.has_documents:
        chosen.append(search_documents)
        if context.section_lookup is not None:
            chosen.append(get_document_section)
    if context.search_conversations is not None:
        chosen.append(search_conversations)
    return chosen
