"""Decide rag vs agent: cheap rules first, the LLM only when they cannot tell.

For a user with documents the order is: text rules (greetings, arithmetic, "my
documents"…); then the documents themselves: a passage holding most of the question's
words (STRONG_OVERLAP), or retrieval's own score past SCORE_THRESHOLD, sends it to them
without asking the model; only where that evidence is weak is the model asked, when it can
call functions, and its vote decides (no vote: no documents). Both thresholds are
calibrated by bench/route_calibration.py on the test corpus: 40 questions it answers, 60 it
does not.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from agent import intents, prompts
from agent.capabilities import supports_tools
from agent.llm import bounded
from agent.memory import INTERNAL_TAGS
from agent.nodes.retrieve import TOP_K
from agent.progress import emit_step
from agent.state import AgentContext, AgentState, Route, add_usage, zero_usage
from agent.tokens import message_text

logger = logging.getLogger(__name__)
# No off-topic question reached 0.59 on either backend; 0.7 keeps a margin (recall 23-33%).
STRONG_OVERLAP = 0.7
# Recall 73-78% of the corpus questions, 8-15% of off-topic ones (a third of them chosen to
# share words with the handbook). A miss answers a document question from nothing; a false
# hit only adds passages the model may ignore: the lower threshold is the better error.
SCORE_THRESHOLD = 0.4
ROUTER_MAX_TOKENS = 200  # a route and a few words of reason


class RouteDecision(BaseModel):
    """Where to send the user's message."""

    route: Literal["rag", "agent"] = Field(description="rag: needs the user's documents")
    reason: str = Field(description="a few words on why")


def route_by_rules(text: str, has_documents: bool) -> tuple[Route, str] | None:
    """Return (route, reason code) when a cheap rule decides, else None."""
    if not has_documents:
        return "agent", "no_documents"
    if intents.is_greeting(text):
        return "agent", "greeting"
    if intents.is_pure_arithmetic(text):
        return "agent", "arithmetic"
    if intents.asks_datetime(text):
        return "agent", "datetime"
    if intents.mentions_documents(text):
        return "rag", "mentions_documents"
    return None


async def route_by_llm(context: AgentContext, text: str) -> tuple[Route | None, str, Any]:
    """Ask the model for a structured routing decision: (route, its reason, raw reply), or
    (None, why not: "router_failed" | "router_undecided", raw reply)."""
    router = (
        bounded(context.llm, ROUTER_MAX_TOKENS)
        .with_structured_output(RouteDecision, method="function_calling", include_raw=True)
        .with_config(tags=INTERNAL_TAGS, run_name="router")
    )
    try:
        # Its whole answer is a few tokens: a server silent this long is not waited out
        # (the agent's own call then reports the outage).
        async with asyncio.timeout(min(context.config.first_byte_timeout or 60, 60)):
            result = await router.ainvoke(
                [SystemMessage(prompts.ROUTER_PROMPT), HumanMessage(text)]
            )
    except Exception as exc:  # the agent call reports a real outage; routing just falls back
        logger.warning("router failed: %s: %s", type(exc).__name__, exc)
        return None, "router_failed", None
    decision = result.get("parsed")
    if not isinstance(decision, RouteDecision):
        return None, "router_undecided", result.get("raw")
    return decision.route, decision.reason, result.get("raw")


async def find_passages(context: AgentContext, text: str) -> list[dict[str, Any]]:
    """Return the best passages for `text` (none when the search fails: routing goes on)."""
    try:
        return list(await context.retriever(text, TOP_K))
    except Exception:
        return []


def route_by_passages(passages: list[dict[str, Any]], *, threshold: str) -> Route:
    """Return "rag" when the passages clear the threshold: "overlap" (the keyword rule)
    or "score" (retrieval's own judgement, when the model could not decide)."""
    if threshold == "overlap":
        best = max((float(p.get("overlap") or 0) for p in passages), default=0.0)
        return "rag" if best >= STRONG_OVERLAP else "agent"
    best = max((float(p.get("score") or 0) for p in passages), default=0.0)
    return "rag" if best >= SCORE_THRESHOLD else "agent"


async def decide(
    context: AgentContext, text: str
) -> tuple[Route, str, str, Any, list[dict[str, Any]]]:
    """Return (route, by what: "rule" | "llm" | "score", reason, the router's raw reply,
    passages already found); the reason is a code, or the model's own words (by "llm")."""
    decided = route_by_rules(text, context.has_documents)
    if context.continues is not None:
        decided = ("agent", "continuing")  # the question was routed when first asked
    if decided is not None:
        return decided[0], "rule", decided[1], None, []
    passages = await find_passages(context, text)
    if route_by_passages(passages, threshold="overlap") == "rag":
        return "rag", "rule", "words_in_documents", None, passages
    if route_by_passages(passages, threshold="score") == "rag":
        # Strong evidence sends the passages whatever a model would vote: small local
        # models vote "no" for plain document questions ("연차는 며칠이야?").
        return "rag", "score", "strong_evidence", None, passages
    asked: tuple[Route | None, str, Any] = (None, "no_function_calling", None)
    if supports_tools(context.config):
        asked = await route_by_llm(context, text)
    choice, reason, raw = asked
    if choice is not None:  # the evidence is weak: the model's vote decides
        return choice, "llm", reason, raw, passages
    return "agent", "score", reason, raw, passages


async def route(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Start the turn: reset per-turn fields and choose the path."""
    messages = state.get("messages", [])
    text = next((message_text(m) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    internal = zero_usage()
    choice, by, reason, raw, passages = await decide(runtime.context, text)
    if raw is not None:
        internal = add_usage(internal, raw)
    code = "route.documents" if choice == "rag" else "route.direct"
    # The model's reason is its own words (any language): kept in the state, not shown.
    emit_step(code, by=by, reason="model" if by == "llm" else reason)
    return {
        "route": choice,
        "route_reason": reason,
        # Passages found while deciding are not searched for again.
        "documents": passages if choice == "rag" else [],
        "iterations": 0,
        "tool_results": {},
        "usage": zero_usage(),
        "internal_usage": internal,
        "memories": [],
        "recalled": [],
    }
