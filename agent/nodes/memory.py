"""Fold older messages into numbered summaries when the window or the context is too big."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langchain_core.messages import RemoveMessage
from langgraph.runtime import Runtime

from agent.config import AgentConfig
from agent.memory import (
    MemoryPlan,
    conversation_language,
    fold_with_model,
    fold_without_model,
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

# The most folds in a row done without asking the summarizer after it kept failing.
MAX_SUMMARY_PAUSE = 15


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


def backoff_after_failure(failures: int) -> int:
    """Return how many folds go without the model after `failures` failures in a row:
    1, 3, 7, then MAX_SUMMARY_PAUSE (a summarizer that always refuses is asked about once
    every 16 folds, not on every turn)."""
    return min(2**failures - 1, MAX_SUMMARY_PAUSE)


async def memory(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Summarize the oldest messages (count trigger) or compress (size trigger).

    Whatever the summarizer does, the messages that leave the window go: a refused or
    failed summary is replaced by an extract of what the user said (no model), and the
    summarizer is asked again only after a pause that doubles with each failure."""
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
    room = max(
        16, int((plan.budget_tokens - memory_tokens([], plan.kept, calibration) - 8) / calibration)
    )
    folded = {"summarized": len(plan.old), "kept": len(plan.kept), "trigger": plan.reason}
    update: dict[str, Any] = {"messages": [RemoveMessage(id=m.id) for m in plan.old]}
    pause = state.get("summary_pause", 0)
    if pause > 0:
        emit_step("memory.kept_words_paused", count=len(plan.old), **folded)
        segments = fold_without_model(plan, summaries, config, language, room)
        return {**update, "summaries": segments, "summary_pause": pause - 1}
    internal = state.get("internal_usage")
    try:
        # A silent server fails this within one request timeout, retries included.
        async with asyncio.timeout(config.request_timeout):
            segments, replies, note = await fold_with_model(
                context.summary_model, plan, summaries, config, language, room
            )
    except SummaryRefused as refused:
        for reply in refused.replies:
            internal = add_usage(internal, reply)
        emit_step("memory.kept_words_refused", count=len(plan.old), detail=refused.reason, **folded)
        return {
            **update,
            **_fell_back(state, plan, summaries, config, language, room),
            "internal_usage": internal,
        }
    except Exception:
        logger.warning("summarizing failed", exc_info=True)
        emit_step("memory.kept_words_failed", count=len(plan.old), **folded)
        return {**update, **_fell_back(state, plan, summaries, config, language, room)}
    for reply in replies:
        internal = add_usage(internal, reply)
    emit_step("memory.summarized", detail=note, **folded)
    return {
        **update,
        "summaries": segments,
        "summary_failures": 0,
        "internal_usage": internal,
    }


def _fell_back(
    state: AgentState,
    plan: MemoryPlan,
    summaries: list[str],
    config: AgentConfig,
    language: str,
    room: int,
) -> dict[str, Any]:
    """Return the state update of a fold the summarizer did not do: an extract, and a
    longer pause before the summarizer is asked again."""
    failures = state.get("summary_failures", 0) + 1
    return {
        "summaries": fold_without_model(plan, summaries, config, language, room),
        "summary_failures": failures,
        "summary_pause": backoff_after_failure(failures),
    }
