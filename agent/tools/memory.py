"""The memory tools: save and delete facts about the user across conversations."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool

from agent.steps import ToolFailed
from agent.tools.search import context_from

MEMORY_OFF = "Memory is off: nothing was saved or deleted."


@tool
async def remember(fact: str, *, config: RunnableConfig) -> str:
    """Save a lasting fact about the user for future conversations: one short sentence in
    the user's words (e.g. "My name is Mina", "I live in Busan")."""
    context = context_from(config)
    if context.memory is None:
        raise ToolFailed("memory.off", MEMORY_OFF)
    saved = await context.memory.remember(fact)
    return f"Saved to memory: {saved.get('text', fact)}"


@tool
async def forget(memory: str, *, config: RunnableConfig) -> str:
    """Delete the saved memories that match `memory` (words of the fact, or its id)."""
    context = context_from(config)
    if context.memory is None:
        raise ToolFailed("memory.off", MEMORY_OFF)
    removed = await context.memory.forget(memory)
    if not removed:
        raise ToolFailed("memory.no_match", "No saved memory matches that: nothing was deleted.")
    return "Deleted from memory: " + "; ".join(str(m.get("text", "")) for m in removed)
