"""The offline model's answers by kind: routing, summaries, tool results, conversation.

Rules on keywords, deterministic, no network; agent/offline.py wraps them in a chat model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agent import intents, prompts
from agent.failure_replies import failure_reply
from agent.tokens import message_text
from text.language import detect_language

_SENTENCE = re.compile(r"[^.!?。\n]+[.!?。]?")


def _last_human(messages: Sequence[BaseMessage]) -> str:
    """Return the text of the newest user message."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message_text(message)
    return ""


def _system_text(messages: Sequence[BaseMessage]) -> str:
    """Return the concatenated system prompt."""
    return "\n".join(message_text(m) for m in messages if isinstance(m, SystemMessage))


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    """Return one tool call with a deterministic id."""
    return {"name": name, "args": args, "id": f"call_offline_{n}_{name}", "type": "tool_call"}


QUESTION = re.compile(
    r"\?|^\s*(what|when|where|how|who|why|which|can|do|does|is|are)\b"
    r"|뭐|무엇|며칠|언제|어디|어떻게|얼마|누구|왜|몇|인가요|나요|까요",
    re.IGNORECASE,
)


def route_args(text: str) -> dict[str, Any]:
    """Decide the router's structured answer from keywords (asked only when documents exist)."""
    policy = re.search(r"polic|rule|manual|handbook|정책|규정|지침|매뉴얼|사내|회사", text, re.I)
    if intents.mentions_documents(text) or policy:
        return {"route": "rag", "reason": "asks about stored documents"}
    if QUESTION.search(text):
        return {"route": "rag", "reason": "a question the documents may answer"}
    return {"route": "agent", "reason": "general conversation"}


def summarize_extractively(system: str, request: str) -> str:
    """Keep the user's statements (and earlier summaries) as the summary."""
    limit = int(m.group(1)) if (m := re.search(r"at most (\d+) words", system)) else 200
    facts: list[str] = []
    for line in request.splitlines():
        line = line.strip()
        if line.startswith("User: "):
            line = line[len("User: ") :]
        elif line.startswith(("Assistant:", "Tool ", "Earlier", "Newer", "Messages")) or not line:
            continue
        line = re.sub(r"^\(\d+\)\s*", "", line).lstrip("- ")
        if line and not line.endswith("?") and line not in facts:
            facts.append(line)
    words: list[str] = []
    for fact in facts:
        words += (fact + " /").split()
    return " ".join(words[:limit]).rstrip(" /") or "-"


def _split_merge_request(request: str) -> tuple[str, str]:
    """Split a merge request into (the two earlier summaries, the newer messages)."""
    head, _, newer = request.partition("Newer messages:")
    return head, newer


def summary_reply(system: str, request: str) -> str:
    """Answer a summarizer request (plain, merge or compress)."""
    if prompts.MERGED_MARKER not in system:
        return summarize_extractively(system, request)
    earlier, newer = _split_merge_request(request)
    merged = summarize_extractively(system, earlier)
    new = summarize_extractively(system, newer)
    return f"{prompts.MERGED_MARKER}\n{merged}\n{prompts.NEW_MARKER}\n{new}"


def _tool_answer(messages: Sequence[BaseMessage], language: str) -> str:
    """Answer from the tool results that follow the last tool call."""
    results = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        results.append(message)
    lines = []
    for result in reversed(results):
        text = message_text(result)
        if result.status == "error":
            lines.append(failure_reply(result, language))
        elif result.name == "calculator":
            lines.append(
                f"계산 결과는 {text}입니다." if language == "ko" else f"The result is {text}."
            )
        elif result.name == "remember":
            fact = text.split(": ", 1)[-1]
            lines.append(
                f"기억해 둘게요: “{fact}”" if language == "ko" else f"I'll remember that: “{fact}”"
            )
        elif result.name == "forget":
            facts = text.split(": ", 1)[-1]
            lines.append(
                f"지웠어요: “{facts}”" if language == "ko" else f"I've forgotten: “{facts}”"
            )
        elif result.name == "get_current_datetime":
            lines.append(f"현재 시각은 {text}입니다." if language == "ko" else f"It is now {text}.")
        else:
            lines.append(text)
    return "\n".join(lines)


# The system prompt's blocks that hold what the user said (memories, summaries, recalled
# messages); the rest is our own instructions, never an answer.
KEPT_BLOCKS = (
    *prompts.MEMORIES_INTRO.values(),
    *prompts.RECALLED_INTRO.values(),
    *(header.split("{n}")[0] for header in prompts.SUMMARY_HEADER.values()),
)


def _what_was_kept(system: str) -> str:
    """The blocks of the system prompt that hold the user's memories and past words."""
    blocks = re.split(r"\n\s*\n", system)
    return "\n\n".join(b for b in blocks if b.lstrip().startswith(KEPT_BLOCKS))


def recall(topic: str, messages: Sequence[BaseMessage]) -> str | None:
    """Find what the user said about `topic` in the summaries and earlier messages."""
    words = intents.keywords(topic)
    if not words:
        return None
    sources = [message_text(m) for m in messages[:-1] if isinstance(m, HumanMessage)][::-1]
    sources.append(_what_was_kept(_system_text(messages)))
    for source in sources:
        for sentence in _SENTENCE.findall(source.replace(" / ", "\n")):
            sentence = sentence.strip(" -")
            if sentence.endswith("?") or not any(w in sentence.lower() for w in words):
                continue
            return sentence
    return None


def _conversation_reply(messages: Sequence[BaseMessage], tools: list[str]) -> tuple[str, list]:
    """Answer the newest user message (text, or a tool call when a tool fits)."""
    text = _last_human(messages)
    language = detect_language([text])
    notice = prompts.OFFLINE_NOTICE[language]
    if intents.is_greeting(text):
        hello = "안녕하세요! 무엇을 도와드릴까요?" if language == "ko" else "Hello! How can I help?"
        return f"{hello} {notice}", []
    if (expression := intents.find_arithmetic(text)) and "calculator" in tools:
        return "", [_call("calculator", {"expression": expression}, len(messages))]
    if "forget" in tools and (what := intents.forget_request(text)):
        return "", [_call("forget", {"memory": what}, len(messages))]
    if "remember" in tools and (fact := intents.stated_fact(text)):
        return "", [_call("remember", {"fact": fact}, len(messages))]
    if intents.asks_datetime(text) and "get_current_datetime" in tools:
        zone = "Asia/Seoul" if language == "ko" else "UTC"
        return "", [_call("get_current_datetime", {"timezone": zone}, len(messages))]
    if (topic := intents.recall_topic(text)) is not None:
        found = recall(topic, messages)
        if found:
            said = "말씀하신 내용은 이렇습니다" if language == "ko" else "You told me"
            return f"{said}: “{found}”", []
    system = _system_text(messages)
    if "[참고 문서]" in system or "[Reference documents]" in system:
        # The first passage (agent/citations.py: "[1] Title — section", its text), cited.
        passage = system.split("\n[1] ", 1)[-1].split("\n\n", 1)[0]
        excerpt = " ".join(passage.split("\n", 1)[-1].split())[:400]
        lead = "문서에서 찾은 내용입니다" if language == "ko" else "From your documents"
        return f"{lead}: {excerpt} [1]", []
    heard = "받은 메시지" if language == "ko" else "You wrote"
    return f"{notice} {heard}: “{text[:200]}”", []


def answer(
    messages: Sequence[BaseMessage], tools: list[str], tool_choice: Any = None
) -> tuple[str, list[dict[str, Any]]]:
    """Return the offline answer to `messages`: its text and its tool calls."""
    system = _system_text(messages)
    if tool_choice and tools:
        args = route_args(_last_human(messages)) if tools[0] == "RouteDecision" else {}
        return "", [_call(tools[0], args, 0)]
    if system.startswith(prompts.SUMMARIZER_MARKER):
        return summary_reply(system, _last_human(messages)), []
    if messages and isinstance(messages[-1], ToolMessage):
        return _tool_answer(messages, detect_language([_last_human(messages)])), []
    return _conversation_reply(messages, tools)
