"""Fold older messages into numbered summaries when the window or the context is too big."""

from __future__ import annotations

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
from agent.progress import emit_thinking
from agent.state import AgentContext, AgentState, add_usage
from agent.summary_check import SummaryRefused
from agent.tokens import estimate_tokens
from agent.tools import tool_schemas_json, tools_for


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
        emit_thinking(
            "memory", f"{len(messages)} message(s), {len(summaries)} summary(ies): nothing to fold"
        )
        return {}
    try:
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
        emit_thinking(
            "memory", f"summary refused ({refused.reason}); kept every message, will retry"
        )
        internal = state.get("internal_usage")
        for reply in refused.replies:
            internal = add_usage(internal, reply)
        return {"internal_usage": internal}
    except Exception as exc:  # keep the messages; the next turn tries again
        emit_thinking("memory", f"summarizing failed ({type(exc).__name__}); kept every message")
        return {}
    internal = state.get("internal_usage")
    for reply in replies:
        internal = add_usage(internal, reply)
    trigger = "too many messages" if plan.reason == "count" else "context too large"
    emit_thinking(
        "memory",
        f"{trigger}: summarized {len(plan.old)} older message(s), kept {len(plan.kept)}; {note}",
    )
    return {
        "summaries": segments,
        "messages": [RemoveMessage(id=m.id) for m in plan.old],
        "internal_usage": internal,
    }
