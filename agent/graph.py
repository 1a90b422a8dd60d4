"""Wire the agent graph: prepare (route, retrieve, memory, recall) → agent ⇄ tools → end."""

from __future__ import annotations

import weakref
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agent.nodes.agent import agent
from agent.nodes.prepare import prepare
from agent.nodes.tools import tools
from agent.state import AgentContext, AgentState

_GRAPHS: weakref.WeakKeyDictionary[BaseCheckpointSaver, CompiledStateGraph] = (
    weakref.WeakKeyDictionary()
)
_UNSAVED: list[CompiledStateGraph] = []


def after_agent(state: AgentState) -> str:
    """Run tools when the model asked for them, else finish."""
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else END


def build_graph() -> StateGraph:
    """Return the uncompiled graph."""
    builder = StateGraph(AgentState, context_schema=AgentContext)
    builder.add_node("prepare", prepare)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "agent")
    builder.add_conditional_edges("agent", after_agent, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder


def get_graph(checkpointer: BaseCheckpointSaver | None) -> CompiledStateGraph:
    """Return the graph compiled for `checkpointer` (compiled once, then cached)."""
    if checkpointer is None:
        if not _UNSAVED:
            _UNSAVED.append(build_graph().compile())
        return _UNSAVED[0]
    graph = _GRAPHS.get(checkpointer)
    if graph is None:
        graph = _GRAPHS[checkpointer] = build_graph().compile(checkpointer=checkpointer)
    return graph


def recursion_limit(max_iterations: int) -> int:
    """Return the step budget of one turn: the fixed nodes plus every tool round."""
    return 2 * max_iterations + 6


def thread_config(
    thread_id: str, *, checkpoint_id: str | None = None, **extra: Any
) -> dict[str, Any]:
    """Return the run config of one conversation thread, at its latest checkpoint or, with
    `checkpoint_id`, at that one (a run from there starts a branch)."""
    configurable = {"thread_id": thread_id}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable, **extra}
