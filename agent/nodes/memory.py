"""Fold older messages into numbered summaries when the window or the context is too big."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langchain_core.messages import RemoveMessage
from langgraph.runtime import Runtime

from agent.memory import (
    compress_into_one,
    conversation_language,
    fold_into_segments,
    memory_tokens,
    plan_memory,
)
from agent.nodes.agent import system_prompt
from agent.progress import emit_step
from agent.state import AgentContext, AgentState, add_usage
from agent.summary_check import SummaryRefused
from agent.tokens import estimate_tokens
from agent.tools import tool_schemas_json, tools_for

logger = logging.getLogger(__name__)


def report_in_view(earlier: int, summaries: int) -> None:
    """Report what the model will see of the conversation when nothing is folded."""
    if summaries:
        emit_step("memory.in_view_with_summary", messages=earlier, summaries=summaries)
    elif earlier > 0:
        emit_step("memory.in_view", messages=earlier)
    else:
        emit_step("memory.fresh")


def fixed_overhead(state: AgentState, context: AgentContext, language: str) -> int:
    """Estimate what every request carries besides memory: instructions, documents, tools."""
    calibration = state.get("calibration", 1.0)
    prompt = system_prompt(
        [],
        state.get("documents", []),
        language,
        False,
        context.instructions,
        memory_on=context.memory is not None,
    )
    schemas = tool_schemas_json(tools_for(context))
    return estimate_tokens(prompt, calibration) + estimate_tokens(schemas, calibration)


async def memory(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Summarize the oldest messages (count trigger) or compress (size trigger)."""
    context = runtime.context
    config = context.config
    messages = state.get("messages", [])
    summaries = list(state.get("summaries", []))
    calibration = state.get("calibration", 1.0)
    language = conversation_language(messages, summaries)
    overhead = fixed_overhead(state, context, language)
    plan = plan_memory(
        messages, summaries, config, calibration=calibration, overhead_tokens=overhead
    )
    if plan.reason is None or (not plan.old and not summaries):
        report_in_view(max(0, len(messages) - 1), len(summaries))
        return {}
    try:
        # A silent server fails this within one request timeout, retries included.
        async with asyncio.timeout(config.request_timeout):
            if plan.reason == "count":
                segments, replies, note = await fold_into_segments(
                    context.summary_model, summaries, plan.old, config, language
                )
            else:
                room = plan.budget_tokens - memory_tokens([], plan.kept, calibration) - 8
                segments, replies, note = await compress_into_one(
                    context.summary_model,
                    summaries,
                    plan.old,
                    language,
                    max(16, int(room / calibration)),
                )
    except SummaryRefused as refused:  # keep the messages; the next turn tries again
        emit_step("memory.summary_failed", why="refused", detail=refused.reason)
        internal = state.get("internal_usage")
        for reply in refused.replies:
            internal = add_usage(internal, reply)
        return {"internal_usage": internal}
    except Exception:  # keep the messages; the next turn tries again
        logger.warning("summarizing failed", exc_info=True)
        emit_step("memory.summary_failed", why="error")
        return {}
    internal = state.get("internal_usage")
    for reply in replies:
        internal = add_usage(internal, reply)
    emit_step(
        "memory.summarized",
        summarized=len(plan.old),
        kept=len(plan.kept),
        trigger=plan.reason,  # "count": too many messages; "compress": the context too big
        detail=note,
    )
    return {
        "summaries": segments,
        "messages": [RemoveMessage(id=m.id) for m in plan.old],
        "internal_usage": internal,
    }
