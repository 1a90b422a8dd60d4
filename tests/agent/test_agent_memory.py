"""Hybrid memory: count trigger, summary window merge, compression (TC-CB-010)."""

from __future__ import annotations

from dataclasses import replace

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.config import AgentConfig
from agent.memory import keep_groups_whole, memory_tokens, plan_memory
from agent.threads import read_thread
from tests.agent.helpers import is_summarizer_request, new_id, run_one
from tests.support.openai_replies import message_texts

FACTS = [
    "My name is Cheolsu Kim and I live in Busan",
    "The project deadline is March 15",
    "Our budget is 100 million won",
    "My favourite colour is teal",
]


def agent_requests(server):
    return [b for b in server.requests if not is_summarizer_request(b)]


def verbatim(body) -> list[dict]:
    return [m for m in body["messages"] if m["role"] != "system"]


async def test_eleventh_message_triggers_a_summary_and_keeps_five(
    online_config, saver, fake_openai
):
    thread = new_id()
    for n in range(6):
        await run_one(
            online_config, saver, thread, f"{FACTS[0] if n == 0 else 'Tell me more'} ({n})"
        )
    summarizer_calls = [b for b in fake_openai.requests if is_summarizer_request(b)]
    assert len(summarizer_calls) == 1  # at turn 6: 11 messages > 10
    assert "Cheolsu Kim" in message_texts(summarizer_calls[0], "user")[-1]
    last = agent_requests(fake_openai)[-1]
    assert len(verbatim(last)) == 5
    assert "[Conversation history 1]" in last["messages"][0]["content"]
    assert "Cheolsu Kim" in last["messages"][0]["content"]
    memory = await read_thread(saver, thread)
    assert len(memory["summaries"]) == 1
    assert len(memory["message_ids"]) == 6  # five kept + the reply
    for body in agent_requests(fake_openai):
        assert len(verbatim(body)) <= online_config.memory_max_messages + 1


async def test_summary_overflow_merges_the_two_oldest_keeping_their_facts(
    online_config, saver, fake_openai
):
    thread = new_id()
    planted = {0: FACTS[0], 3: FACTS[1], 6: FACTS[2], 9: FACTS[3]}
    for n in range(15):
        await run_one(online_config, saver, thread, planted.get(n, f"Just chatting, turn {n}."))
    memory = await read_thread(saver, thread)
    assert len(memory["summaries"]) == 3
    assert "Cheolsu Kim" in memory["summaries"][0]  # the oldest fact survived the merge
    summarizer_calls = [b for b in fake_openai.requests if is_summarizer_request(b)]
    assert len(summarizer_calls) == 4  # turns 6, 9, 12, 15: the merge rides on the 4th call
    assert "=== MERGED ===" in summarizer_calls[-1]["messages"][0]["content"]
    system = agent_requests(fake_openai)[-1]["messages"][0]["content"]
    for fact in ("Cheolsu Kim", "March 15", "100 million"):
        assert fact in system


async def test_korean_conversation_gets_korean_summary_headers(online_config, saver, fake_openai):
    thread = new_id()
    for n in range(6):
        await run_one(online_config, saver, thread, f"내 이름은 철수야. 오늘 이야기 {n}번째야.")
    system = agent_requests(fake_openai)[-1]["messages"][0]["content"]
    assert "[대화 기록 1]" in system
    summarizer = next(b for b in fake_openai.requests if is_summarizer_request(b))
    assert "Korean" in summarizer["messages"][0]["content"]


async def test_context_over_threshold_is_compressed_to_the_target(
    saver, fake_openai, online_config
):
    """TC-CB-010: past 70% of the window, memory is compressed to at most 10%."""
    config = replace(online_config, context_window=2000)
    thread = new_id()
    filler = " ".join(f"word{i}" for i in range(200))
    results = [
        await run_one(config, saver, thread, f"Our budget is 100 million won. {filler}"),
        await run_one(config, saver, thread, f"The deadline is March 15. {filler}"),
    ]
    result = await run_one(config, saver, thread, "What is the budget?")
    results.append(result)
    compressed = [e for r in results for e in r.steps("memory") if e["code"] == "memory.summarized"]
    assert any(e["params"]["trigger"] == "compress" for e in compressed)
    memory = await read_thread(saver, thread)
    kept = [m for m in memory["message_ids"]]
    assert len(memory["summaries"]) == 1
    assert "budget" in memory["summaries"][0].lower()
    before_reply = [HumanMessage("What is the budget?")]
    used = memory_tokens(memory["summaries"], before_reply, memory["calibration"])
    assert used <= 0.1 * config.context_window
    # Compressed on turn 2 (tool schemas count too); turn 3's question stays verbatim.
    assert len(kept) <= 4
    assert memory["messages"][-2]["content"] == "What is the budget?"


def test_a_tool_call_and_its_results_are_never_split():
    messages = [
        HumanMessage("a", id="1"),
        AIMessage("b", id="2"),
        HumanMessage("c", id="3"),
        AIMessage("", id="4", tool_calls=[{"name": "calculator", "args": {}, "id": "t1"}]),
        ToolMessage("r", tool_call_id="t1", id="5"),
        AIMessage("d", id="6"),
    ]
    assert keep_groups_whole(messages, 4) == 3
    config = AgentConfig(memory_max_messages=4, memory_keep_recent=2)
    plan = plan_memory(messages, [], config)
    assert plan.reason == "count"
    assert [m.id for m in plan.kept] == ["4", "5", "6"]
