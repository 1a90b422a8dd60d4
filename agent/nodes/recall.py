"""Bring back what the kept window no longer holds: the user's memories and older messages.

No model call: the injected search ranks by the words of the user's message. Older
messages are recalled only for words the kept window and the summaries lack, so a
message about what is already in view recalls nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from agent.progress import emit_step
from agent.state import AgentContext, AgentState
from agent.tokens import estimate_tokens, message_text

logger = logging.getLogger(__name__)


def within_budget(items: list[dict[str, Any]], max_tokens: int) -> list[dict[str, Any]]:
    """Return the best items, in order, whose text fits in `max_tokens` (none is cut)."""
    chosen, used = [], 0
    for item in items:
        cost = estimate_tokens(str(item.get("content") or "")) + 8
        if used + cost > max_tokens:
            continue
        chosen.append(item)
        used += cost
    return chosen


async def recall_memories(context: AgentContext, text: str) -> list[dict[str, Any]]:
    """Return this turn's memories (none when memory is off or the store fails)."""
    if context.memory is None or not text:
        return []
    try:
        return list(await context.memory.recall(text, context.config.memory_recall_k))
    except Exception:  # the turn goes on without them
        logger.warning("recalling memories failed", exc_info=True)
        emit_step("memory.recall_failed")
        return []


async def recall_older(state: AgentState, context: AgentContext, text: str) -> list[dict[str, Any]]:
    """Return older messages of this branch the user's message refers to (verbatim)."""
    summaries = state.get("summaries", [])
    if context.recall_messages is None or not summaries or not text or context.continues:
        return []  # nothing has left the window, or a continue (no new question)
    messages = state.get("messages", [])
    present = "\n".join([*summaries, *(message_text(m) for m in messages[:-1])])
    exclude = [str(m.id) for m in messages if m.id]
    try:
        found = await context.recall_messages(text, present, exclude)
    except Exception:  # the turn goes on without them
        logger.warning("recalling older messages failed", exc_info=True)
        emit_step("memory.recall_messages_failed")
        return []
    # A small window (a local model's 2,048 tokens) gets a tenth of it, not the whole budget.
    budget = min(context.config.recall_max_tokens, context.config.context_window // 10)
    return within_budget(list(found), budget)


async def recall(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Find this turn's memories and recalled messages (per-turn state)."""
    messages = state.get("messages", [])
    last = messages[-1] if messages else None
    text = message_text(last) if isinstance(last, HumanMessage) else ""
    memories = await recall_memories(runtime.context, text)
    recalled = await recall_older(state, runtime.context, text)
    if memories:
        emit_step("memory.memories_used", count=len(memories))
    if recalled:
        emit_step("memory.messages_recalled", count=len(recalled))
    return {"memories": memories, "recalled": recalled}
