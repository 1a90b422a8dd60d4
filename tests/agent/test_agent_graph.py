"""The graph's shape: a turn's first four parts are one step, and threads saved by the
four-step graph of earlier releases go on with their memory."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph

from agent import runner
from agent.graph import after_agent, get_graph, thread_config
from agent.nodes.agent import agent
from agent.nodes.memory import memory
from agent.nodes.recall import recall
from agent.nodes.retrieve import retrieve
from agent.nodes.route import route
from agent.nodes.tools import tools
from agent.progress import collecting
from agent.state import AgentContext, AgentState
from agent.threads import read_thread
from tests.agent.helpers import is_summarizer_request, make_turn, new_id, run_one

FACT = "My name is Cheolsu Kim and I live in Busan"


def four_step_graph(checkpointer: Any) -> Any:
    """Return the graph as releases before the prepare step compiled it."""
    builder = StateGraph(AgentState, context_schema=AgentContext)
    for name, node in [
        ("route", route),
        ("retrieve", retrieve),
        ("memory", memory),
        ("recall", recall),
        ("agent", agent),
        ("tools", tools),
    ]:
        builder.add_node(name, node)
    builder.add_edge(START, "route")
    builder.add_conditional_edges(
        "route", lambda s: "retrieve" if s.get("route") == "rag" else "memory"
    )
    builder.add_edge("retrieve", "memory")
    builder.add_edge("memory", "recall")
    builder.add_edge("recall", "agent")
    builder.add_conditional_edges("agent", after_agent, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def agent_requests(server) -> list[dict[str, Any]]:
    return [b for b in server.requests if not is_summarizer_request(b)]


async def test_a_thread_saved_by_the_four_step_graph_goes_on_with_its_memory(
    online_config, saver, fake_openai, monkeypatch
):
    thread = new_id()
    old = four_step_graph(saver)
    with monkeypatch.context() as patch:
        patch.setattr(runner, "get_graph", lambda checkpointer: old)
        for n in range(6):  # the sixth turn folds the first into a summary
            await run_one(online_config, saver, thread, f"{FACT if n == 0 else 'More'} ({n})")
    assert sum(map(is_summarizer_request, fake_openai.requests)) == 1
    result = await run_one(online_config, saver, thread, "Where do I live?")
    assert result.finished["finish_reason"] == "end_turn"
    system = agent_requests(fake_openai)[-1]["messages"][0]["content"]
    assert "[Conversation history 1]" in system and "Busan" in system
    users = [
        m["content"] for m in agent_requests(fake_openai)[-1]["messages"] if m["role"] == "user"
    ]
    assert users[-2:] == ["More (5)", "Where do I live?"]
    kept = await read_thread(saver, thread)
    assert len(kept["summaries"]) == 1


async def test_a_turn_before_the_model_is_one_step(online_config, saver, fake_openai):
    turn = make_turn(online_config, saver, new_id(), "Hello there")
    records: list[dict[str, Any]] = []
    with collecting(records.append):
        steps = [
            (part["data"]["metadata"]["step"], list(part["data"]["next"]))
            async for part in get_graph(saver).astream(
                {"messages": [HumanMessage("Hello there", id=new_id())]},
                thread_config(turn.thread_id, recursion_limit=20),
                context=turn.context,
                stream_mode="checkpoints",
                version="v2",
            )
        ]
    # The input's, the start's, then one step before the model's (it was four), the model's.
    assert steps == [(-1, ["__start__"]), (0, ["prepare"]), (1, ["agent"]), (2, [])]
    codes = [r["code"] for r in records if r.get("kind") == "thinking"]
    assert codes[:2] == ["route.direct", "memory.fresh"]  # they ran in that one step
    assert agent_requests(fake_openai)[-1]["messages"][-1]["content"] == "Hello there"
