"""Benchmark the agent's LLM calls and memory cost; print one JSON line.

1. Seed 001's five scenarios: LLM calls per turn against the seed's table (2/3/2/3/3).
2. A 60-turn Korean/English conversation with five planted facts, run with four
   memories (full history, the seed's window that drops the oldest summary, ours, ours
   with recall of older messages) and three fake summarizers (one keeps every fact, one
   keeps only the three newest, one whose every summary the app refuses).
3. Memories across conversations: five facts told in conversation A (the model saves
   each with `remember`), asked in a new conversation B; another user told the same
   words with other values.

Recall ranks with the app's own keyword search (text/ranking.py, memories/ranking.py: the
functions the database-backed recall uses after its query); memories live in LangGraph's
InMemoryStore (bench/agent_harness.py runs the turns).

Everything runs against tests/support/fake_openai.py through the real ChatOpenAI.
Run: uv run python bench/agent_calls.py
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import sys
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from agent.config import AgentConfig
from agent.intents import find_arithmetic
from bench.agent_harness import BenchMemory, Transcript, run
from bench.fake_llm import TOPIC, kind_of, request_tokens, summary_reply, typical_reply
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, ToolCall, message_texts

SEED_TABLE = {"simple_chat": 2, "tool": 3, "rag": 2, "long_conversation": 3, "rag_tool": 3}
FACTS = {
    1: ("My employee number is 58213.", "58213"),
    7: ("프로젝트 코드명은 파란고래입니다.", "파란고래"),
    15: ("The server room door code is 7741.", "7741"),
    30: ("제 딸의 생일은 9월 3일이에요.", "9월 3일"),
    45: ("Our product launch city is Lisbon.", "Lisbon"),
}
FILLER_EN = (
    "I spent the morning reviewing the quarterly planning notes with the design team, "
    "and we talked about onboarding, the support backlog, a few dashboard tweaks and how "
    "to keep the weekly sync short enough that nobody dreads it. After lunch I answered "
    "customer emails and drafted a short update for the leadership meeting on Friday, "
    "then spent the rest of the afternoon on code review. "
)
FILLER_KO = (
    "오늘 오전에는 디자인 팀과 분기 계획 문서를 함께 검토했고, 온보딩 절차와 고객 지원 "
    "대기 목록, 대시보드 개선 사항, 그리고 주간 회의를 짧게 유지하는 방법에 대해 이야기했어요. "
    "점심 후에는 메일에 답장했어요. "
)


# What another user says in the cross-conversation scenario: the same words, other values.
OTHER_FACTS = [
    ("My employee number is 40017.", "40017"),
    ("프로젝트 코드명은 붉은여우입니다.", "붉은여우"),
    ("The server room door code is 2290.", "2290"),
    ("제 딸의 생일은 1월 17일이에요.", "1월 17일"),
    ("Our product launch city is Osaka.", "Osaka"),
]


def all_facts() -> list[tuple[str, str]]:
    """Return every planted fact sentence (both users') with its key."""
    return [*FACTS.values(), *OTHER_FACTS]


def planted_in(text: str, keep_last: int | None) -> list[str]:
    """Return the planted fact sentences found in `text` (only the newest few if lossy)."""
    found = [sentence for sentence, key in FACTS.values() if key in text]
    return found[-keep_last:] if keep_last else found


def summary_text(text: str, keep_last: int | None, language: str) -> str:
    """Return the planted facts found in `text` (all, or the newest few) and the topic."""
    return " ".join([*planted_in(text, keep_last), TOPIC[language]])


def summarizer_reply(body: dict[str, Any], keep_last: int | None) -> Reply:
    """Summarize like a model that keeps the planted facts (all, or the newest few), in
    the language the prompt asks for."""
    return summary_reply(body, lambda text, language: summary_text(text, keep_last, language))


def make_responder(keep_last: int | None, *, refuse: bool = False):
    """Return the fake server's responder for the benchmark (`refuse`: a summarizer whose
    every summary the app refuses, as small local models write)."""

    def respond(body: dict[str, Any]) -> Reply:
        kind = kind_of(body)
        if kind == "summarizer" and refuse:
            return Reply(text="OK")
        if kind == "router":
            users = message_texts(body, "user")
            rag = re.search(r"정책|policy", users[-1] if users else "")
            route = "rag" if rag else "agent"
            return Reply(
                tool_calls=[ToolCall("RouteDecision", {"route": route, "reason": "bench"})]
            )
        if kind == "summarizer":
            return summarizer_reply(body, keep_last)
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Reply(text=f"결과는 {last['content']}입니다.")
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        fact = next((f for f, _ in all_facts() if f in (last.get("content") or "")), None)
        if "remember" in offered and fact:
            return Reply(tool_calls=[ToolCall("remember", {"fact": fact})])
        expression = find_arithmetic(last.get("content") or "")
        if body.get("tools") and expression:
            return Reply(tool_calls=[ToolCall("calculator", {"expression": expression})])
        return typical_reply(body)

    return respond


async def scenario_calls(server: FakeOpenAI, config: AgentConfig) -> dict[str, Any]:
    """Count LLM calls per seed-001 scenario (only the measured turn)."""
    saver = InMemorySaver()
    cases = {
        "simple_chat": ([], "안녕하세요"),
        "tool": ([], "123 * 456 계산해줘"),
        "rag": ([], "회사 휴가 정책이 뭐야?"),
        "long_conversation": (
            [
                "내 이름은 철수야",
                "프로젝트 마감일은 3월 15일이야",
                "예산은 1억원이야",
                "좋아",
                "고마워",
            ],
            "아까 말한 프로젝트 마감일이 언제라고 했지?",
        ),
        "rag_tool": ([], "회사 휴가 정책 기준으로 15 - 7 계산해줘"),
    }
    result = {}
    for name, (history, question) in cases.items():
        thread = str(uuid.uuid4())
        for text in history:
            await run(config, saver, thread, text)
        before = len(server.requests)
        await run(config, saver, thread, question)
        kinds = [kind_of(b) for b in server.requests[before:]]
        result[name] = {
            "ours": len(kinds),
            "seed": SEED_TABLE[name],
            "router": kinds.count("router"),
            "summarizer": kinds.count("summarizer"),
            "main": kinds.count("main"),
        }
    return result


async def no_function_calling(config: AgentConfig) -> dict[str, Any]:
    """Documents + a model whose server refuses tools (llama.cpp's without a tool parser):
    the first turn learns it (the refused router and tool calls count), later turns go to
    retrieval by its score with no router call and no tools."""
    respond = make_responder(None)

    def refuse_tools(body: dict[str, Any]) -> Reply | str:
        if body.get("tools"):
            return Reply(status=400, error_message="tools are not supported")
        return respond(body)

    saver, thread = InMemorySaver(), str(uuid.uuid4())
    with FakeOpenAI(refuse_tools) as server:
        server_config = replace(config, openai_base_url=server.base_url, model="no-tools")
        result: dict[str, Any] = {}
        for name, text in (("first_turn", "연차는 며칠이야?"), ("later_turn", "병가는 며칠이야?")):
            before = len(server.requests)
            finished = await run(server_config, saver, thread, text)
            bodies = server.requests[before:]
            result[name] = {
                "calls": len(bodies),
                "router": sum(1 for b in bodies if kind_of(b) == "router"),
                "with_tools": sum(1 for b in bodies if b.get("tools")),
                "route": finished["context"].get("route"),
                "passage_in_prompt": "연차는 15일" in json.dumps(bodies[-1], ensure_ascii=False),
                "finish_reason": finished["finish_reason"],
            }
    return result


def user_message(turn: int) -> str:
    """Return the scripted user message of `turn` (~80 tokens, a fact on planted turns)."""
    if turn == 60:
        return (
            "Please list everything I asked you to remember during this conversation: my "
            "employee number, the project code name, the door code, my daughter's birthday "
            "and the launch city."
        )
    filler = FILLER_KO if turn % 2 else FILLER_EN
    fact = FACTS.get(turn, ("", ""))[0]
    return f"{fact} {filler}".strip()


async def long_conversation(
    server: FakeOpenAI, config: AgentConfig, *, with_recall: bool = False
) -> dict[str, Any]:
    """Run the 60-turn conversation once and measure what each request carried."""
    saver, thread = InMemorySaver(), str(uuid.uuid4())
    transcript = Transcript() if with_recall else None
    per_turn: list[int] = []
    calls_per_turn: list[int] = []
    recalled_turns: list[int] = []
    summarizer_calls = summarizer_tokens = 0
    verbatim = True
    last_main: dict[str, Any] = {}
    for turn in range(1, 61):
        before = len(server.requests)
        text = user_message(turn)
        finished = await run(config, saver, thread, text, transcript=transcript)
        if finished["context"].get("recalled_message_ids"):
            recalled_turns.append(turn)
        bodies = server.requests[before:]
        calls_per_turn.append(len(bodies))
        mains = [b for b in bodies if kind_of(b) == "main"]
        summaries = [b for b in bodies if kind_of(b) == "summarizer"]
        per_turn.append(sum(request_tokens(b) for b in mains))
        summarizer_calls += len(summaries)
        summarizer_tokens += sum(request_tokens(b) for b in summaries)
        verbatim &= all(message_texts(b, "user")[-1] == text for b in mains)
        last_main = mains[-1]
    carried = " ".join(message_texts(last_main))
    steady = per_turn[9:]
    return {
        "main_input_total": sum(per_turn),
        "main_input_per_turn": per_turn,
        "summarizer_calls": summarizer_calls,
        "summarizer_calls_per_turn": round(summarizer_calls / 60, 3),
        "summarizer_input_total": summarizer_tokens,
        "facts_in_turn60": [key for _, key in FACTS.values() if key in carried],
        "turn10_60_mean": round(statistics.mean(steady)),
        "turn10_60_max_over_mean": round(max(steady) / statistics.mean(steady), 2),
        "turn10_60_first_vs_last_10_mean": [
            round(statistics.mean(steady[:10])),
            round(statistics.mean(steady[-10:])),
        ],
        "current_message_verbatim": verbatim,
        "llm_calls": sum(calls_per_turn),
        "llm_calls_per_turn": calls_per_turn,
        "turns_with_recall": recalled_turns,
        "turn10_60_max": max(steady),
    }


async def memory_comparison(server: FakeOpenAI, base: AgentConfig) -> dict[str, Any]:
    """Compare full history, the seed's window and ours under one summarizer."""
    memories = {
        "full_history": replace(base, memory_max_messages=10**6, compression_threshold=1.0),
        "seed_window": replace(base, summary_overflow="drop"),
        "ours": base,
    }
    results = {name: await long_conversation(server, cfg) for name, cfg in memories.items()}
    results["ours_with_recall"] = await long_conversation(server, base, with_recall=True)
    full = results["full_history"]["main_input_total"]
    for figures in results.values():
        figures["main_input_vs_full"] = round(figures["main_input_total"] / full, 3)
        with_summaries = figures["main_input_total"] + figures["summarizer_input_total"]
        figures["with_summarizer_vs_full"] = round(with_summaries / full, 3)
    return results


async def across_conversations(server: FakeOpenAI, config: AgentConfig) -> dict[str, Any]:
    """Tell five facts in conversation A; ask them in a new conversation B. Another user
    told the same words with other values, in their own conversation."""
    store, saver = InMemoryStore(), InMemorySaver()
    ann, ben = BenchMemory(store, 1), BenchMemory(store, 2)
    thread_a, thread_ben = str(uuid.uuid4()), str(uuid.uuid4())
    for (fact, _), (other, _) in zip(FACTS.values(), OTHER_FACTS, strict=True):
        await run(config, saver, thread_a, fact, memory=ann)
        await run(config, saver, thread_ben, other, memory=ben)
    before = len(server.requests)
    await run(config, saver, str(uuid.uuid4()), user_message(60), memory=ann)
    bodies = [b for b in server.requests[before:] if kind_of(b) == "main"]
    carried = " ".join(t for b in bodies for t in message_texts(b))
    return {
        "saved": {"ann": len(await ann._all()), "ben": len(await ben._all())},
        "facts_in_b": [key for _, key in FACTS.values() if key in carried],
        "other_users_facts_in_b": [key for _, key in OTHER_FACTS if key in carried],
        "llm_calls_in_b": len(server.requests) - before,
    }


async def main() -> dict[str, Any]:
    """Run every part of the benchmark and return the figures."""
    output: dict[str, Any] = {"bench": "agent_calls"}
    for label, keep_last in (("fact_keeping", None), ("lossy_newest3", 3), ("refused", None)):
        with FakeOpenAI(make_responder(keep_last, refuse=label == "refused")) as server:
            config = AgentConfig(
                model="bench-model",
                openai_api_key="bench",
                openai_base_url=server.base_url,
                max_retries=0,
            )
            if label == "fact_keeping":
                output["scenarios"] = await scenario_calls(server, config)
                output["scenarios"]["rag_no_function_calling"] = await no_function_calling(config)
            output[label] = await memory_comparison(server, config)
            if label == "fact_keeping":
                output["across_conversations"] = await across_conversations(server, config)
    ours = output["fact_keeping"]["ours"]
    lossy = output["lossy_newest3"]["ours_with_recall"]
    across = output["across_conversations"]
    refused = output["refused"]["ours_with_recall"]
    output["targets"] = {
        "main_input_le_20pct_of_full": ours["main_input_vs_full"] <= 0.20,
        "with_summarizer_le_25pct": ours["with_summarizer_vs_full"] <= 0.25,
        "all_five_facts_at_turn60": len(ours["facts_in_turn60"]) == 5,
        "summarizer_calls_le_0.4_per_turn": ours["summarizer_calls_per_turn"] <= 0.4,
        "flat_from_turn10": ours["turn10_60_max_over_mean"] <= 1.5,
        "current_message_verbatim": ours["current_message_verbatim"],
        "lossy_with_recall_all_five_at_turn60": len(lossy["facts_in_turn60"]) == 5,
        "lossy_with_recall_main_input_le_20pct": lossy["main_input_vs_full"] <= 0.20,
        "lossy_with_recall_with_summarizer_le_25pct": lossy["with_summarizer_vs_full"] <= 0.25,
        "lossy_with_recall_turn10_60_mean_le_1200": lossy["turn10_60_mean"] <= 1200,
        "recall_adds_no_llm_call": (
            lossy["llm_calls_per_turn"] == output["lossy_newest3"]["ours"]["llm_calls_per_turn"]
        ),
        # A summarizer refused every time: memory still compresses, the facts still come back.
        "refused_with_recall_all_five_at_turn60": len(refused["facts_in_turn60"]) == 5,
        "refused_main_input_le_25pct": refused["main_input_vs_full"] <= 0.25,
        "refused_flat_from_turn10": refused["turn10_60_max_over_mean"] <= 1.5,
        "refused_summarizer_calls_le_0.2_per_turn": refused["summarizer_calls_per_turn"] <= 0.2,
        "across_all_five_in_b": len(across["facts_in_b"]) == 5,
        "across_none_of_other_user": across["other_users_facts_in_b"] == [],
        "no_function_calling_routes_to_retrieval_without_router": (
            output["scenarios"]["rag_no_function_calling"]["later_turn"]
            == {
                "calls": 1,
                "router": 0,
                "with_tools": 0,
                "route": "rag",
                "passage_in_prompt": True,
                "finish_reason": "end_turn",
            }
        ),
    }
    return output


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main()), ensure_ascii=False))
