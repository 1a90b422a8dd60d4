"""Decide rag vs agent: cheap rules first, the LLM only when they cannot tell."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from agent import intents, prompts
from agent.memory import INTERNAL_TAGS
from agent.progress import emit_thinking
from agent.state import AgentContext, AgentState, Route, add_usage, zero_usage
from agent.tokens import message_text


class RouteDecision(BaseModel):
    """Where to send the user's message."""

    route: Literal["rag", "agent"] = Field(description="rag: needs the user's documents")
    reason: str = Field(description="a few words on why")


def route_by_rules(text: str, has_documents: bool) -> tuple[Route, str] | None:
    """Return (route, reason) when a cheap rule decides, else None."""
    if not has_documents:
        return "agent", "no documents"
    if intents.is_greeting(text):
        return "agent", "greeting"
    if intents.is_pure_arithmetic(text):
        return "agent", "arithmetic"
    if intents.asks_datetime(text):
        return "agent", "date/time"
    if intents.mentions_documents(text):
        return "rag", "mentions documents"
    return None


async def route_by_llm(context: AgentContext, text: str) -> tuple[Route, str, Any]:
    """Ask the model for a structured routing decision; fall back to agent on failure."""
    router = context.llm.with_structured_output(
        RouteDecision, method="function_calling", include_raw=True
    ).with_config(tags=INTERNAL_TAGS, run_name="router")
    try:
        result = await router.ainvoke([SystemMessage(prompts.ROUTER_PROMPT), HumanMessage(text)])
    except Exception as exc:  # the agent call reports a real outage; routing just falls back
        return "agent", f"router failed ({type(exc).__name__})", None
    decision = result.get("parsed")
    if not isinstance(decision, RouteDecision):
        return "agent", "router gave no decision", result.get("raw")
    return decision.route, decision.reason, result.get("raw")


async def route(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Start the turn: reset per-turn fields and choose the path."""
    messages = state.get("messages", [])
    text = next((message_text(m) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    internal = zero_usage()
    decided = route_by_rules(text, runtime.context.has_documents)
    if runtime.context.continues is not None:
        decided = ("agent", "continuing a reply")  # the question was routed when first asked
    if decided is not None:
        choice, reason = decided
        emit_thinking("route", f"rule: {reason} → {choice}")
    else:
        choice, reason, raw = await route_by_llm(runtime.context, text)
        if raw is not None:
            internal = add_usage(internal, raw)
        emit_thinking("route", f"llm: {choice} ({reason})")
    return {
        "route": choice,
        "route_reason": reason,
        "documents": [],
        "iterations": 0,
        "tool_results": {},
        "usage": zero_usage(),
        "internal_usage": internal,
        "ledger": {},
    }
