"""Fetch passages from the user's documents for the RAG path."""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from agent.citations import cited, sources
from agent.progress import emit, emit_step
from agent.state import AgentContext, AgentState
from agent.tokens import message_text

logger = logging.getLogger(__name__)
TOP_K = 4


async def retrieve(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Search the user's documents with the latest message; keep the passages worth citing
    for the prompt (agent/citations.py), and announce their documents as the sources."""
    messages = state.get("messages", [])
    query = next((message_text(m) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    documents = list(state.get("documents") or [])  # found while routing: not searched again
    try:
        if not documents:
            documents = list(await runtime.context.retriever(query, TOP_K))
    except Exception:  # a broken index must not sink the answer
        logger.warning("document search failed", exc_info=True)
        emit_step("retrieve.failed")
        return {"documents": []}
    documents = cited(documents)
    if documents:
        emit_step("retrieve.found", count=len(documents))
        emit({"kind": "sources", "items": sources(documents)})
    else:
        emit_step("retrieve.nothing")
    return {"documents": documents}
