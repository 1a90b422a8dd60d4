"""Search tools backed by callables the caller injects (documents, other conversations)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool

from agent.citations import cited, format_passages, sources
from agent.state import AgentContext
from agent.steps import ToolFailed

CONTEXT_KEY = "agent_context"


def context_from(config: RunnableConfig) -> AgentContext:
    """Return the run's AgentContext that the tools node put into the config."""
    context = (config.get("configurable") or {}).get(CONTEXT_KEY)
    if not isinstance(context, AgentContext):
        raise RuntimeError("search tools run only inside the agent graph")
    return context


@tool(response_format="content_and_artifact")
async def search_documents(
    query: str, k: int = 4, *, config: RunnableConfig
) -> tuple[str, dict[str, Any]]:
    """Search the user's documents; return the k best passages."""
    context = context_from(config)
    found = cited(await context.retriever(query, max(1, min(int(k), 10))))
    if not found:
        return "No matching documents.", {"sources": []}
    # Cited like the documents path's passages: [n] is the document's number.
    return "\n\n".join(format_passages(found)), {"sources": sources(found)}


@tool
async def search_conversations(query: str, limit: int = 5, *, config: RunnableConfig) -> str:
    """Search the user's other conversations; return matching snippets."""
    context = context_from(config)
    if context.search_conversations is None:
        raise ToolFailed(
            "tool.search_conversations.failed", "Searching other conversations is not available."
        )
    items = await context.search_conversations(query, max(1, min(int(limit), 10)))
    if not items:
        return "No other conversation mentions that."
    return "\n".join(
        f"- {item.get('title') or item.get('conversation_id')}: {item.get('snippet', '')}"
        for item in items
    )


@tool
async def get_document_section(document: str, section: str, *, config: RunnableConfig) -> str:
    """Read one section of the user's document by number ("3.2", "제3조") or title."""
    context = context_from(config)
    if context.section_lookup is None:
        raise ToolFailed(
            "tool.get_document_section.failed", "Reading document sections is not available."
        )
    found = await context.section_lookup(document, section)
    if not found:
        raise ToolFailed(
            "documents.no_section",
            f"No section {section!r} in a document matching {document!r}.",
            section=section,
        )
    title = found.get("document_title") or document
    return f"{title} — {found.get('section') or section}\n{found.get('text') or ''}"
