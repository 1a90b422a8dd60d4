"""The built-in offline chat model: deterministic, no network, streams, calls tools."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool

from agent import intents, prompts
from agent.steps import fill
from agent.tokens import estimate_message_tokens, estimate_tokens, message_text
from text.language import detect_language

OFFLINE_MODEL_NAME = "offline"
_SENTENCE = re.compile(r"[^.!?。\n]+[.!?。]?")


def _tool_names(tools: Sequence[dict[str, Any]] | None) -> list[str]:
    """Return the function names of bound OpenAI-format tools."""
    return [t["function"]["name"] for t in tools or [] if "function" in t]


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


# What the offline model says when a tool fails, by the failure's step (agent/steps.py),
# then by tool: (English, Korean). Written for the person; `%(name)s` takes the step's params.
FAILURE_REPLIES: dict[str, tuple[str, str]] = {
    "memory.sensitive_id": (
        "I couldn't save that as a memory because it looks like an ID number: memories never"
        " hold ID, card or account numbers, or passwords.",
        "신분증 번호처럼 보여서 메모리에 저장하지 않았어요. 메모리에는 신분증·카드·계좌 번호나"
        " 비밀번호를 저장하지 않아요.",
    ),
    "memory.sensitive_financial": (
        "I couldn't save that as a memory because it looks like a card or bank account number:"
        " memories never hold ID, card or account numbers, or passwords.",
        "카드 번호나 계좌 번호처럼 보여서 메모리에 저장하지 않았어요. 메모리에는 신분증·카드·계좌"
        " 번호나 비밀번호를 저장하지 않아요.",
    ),
    "memory.sensitive_contact": (
        "I couldn't save that as a memory because it looks like a phone number or e-mail"
        " address. You can add it yourself on the memory page if you want it kept.",
        "전화번호나 이메일 주소처럼 보여서 메모리에 저장하지 않았어요. 꼭 남기고 싶으면 메모리"
        " 페이지에서 직접 추가할 수 있어요.",
    ),
    "memory.sensitive_secret": (
        "I couldn't save that as a memory because it looks like a password or secret key:"
        " memories never hold secrets.",
        "비밀번호나 비밀 키처럼 보여서 메모리에 저장하지 않았어요. 메모리에는 비밀 정보를 저장하지"
        " 않아요.",
    ),
    "memory.off": (
        "Memory is off, so I can't save or delete memories. You can turn it on in the settings.",
        "메모리가 꺼져 있어서 저장하거나 지울 수 없어요. 설정에서 켤 수 있어요.",
    ),
    "memory.too_long": (
        "That is too long to keep as one memory (at most %(limit)s characters).",
        "메모리 하나로 저장하기에는 너무 길어요 (최대 %(limit)s자).",
    ),
    "memory.full": (
        "I couldn't save that: you already have %(limit)s memories. Delete a few on the memory"
        " page first.",
        "메모리가 이미 %(limit)s개라서 저장하지 못했어요. 메모리 페이지에서 몇 개를 지워 주세요.",
    ),
    "memory.no_match": (
        "I couldn't find a saved memory like that, so nothing was deleted.",
        "그런 내용의 메모리를 찾지 못해서 아무것도 지우지 않았어요.",
    ),
    "calculator.division_by_zero": (
        "That divides by zero, so there is no result.",
        "0으로 나누는 계산이라 결과가 없어요.",
    ),
    "calculator.too_large": (
        "The result is too large for me to calculate.",
        "결과가 너무 커서 계산할 수 없어요.",
    ),
    "calculator.not_real": ("The result is not a real number.", "결과가 실수가 아니에요."),
    "calculator.too_long": (
        "That expression is too long for me to calculate.",
        "식이 너무 길어서 계산할 수 없어요.",
    ),
    "calculator.invalid": (
        "I couldn't read that as arithmetic.",
        "그 식은 계산할 수 있는 형태가 아니에요.",
    ),
    "clock.unknown_zone": (
        "I don't know the time zone %(zone)s.",
        "%(zone)s 시간대를 알 수 없어요.",
    ),
    "tool.remember.failed": (
        "I couldn't save that as a memory this time.",
        "이번에는 메모리에 저장하지 못했어요.",
    ),
    "tool.forget.failed": (
        "I couldn't delete that memory this time.",
        "이번에는 메모리를 지우지 못했어요.",
    ),
    "tool.calculator.failed": (
        "I couldn't work that out this time.",
        "이번에는 계산하지 못했어요.",
    ),
    "tool.get_current_datetime.failed": (
        "I couldn't read the clock this time.",
        "이번에는 시각을 확인하지 못했어요.",
    ),
}
FAILURE_FALLBACK = ("Sorry, that didn't work this time.", "죄송해요, 이번에는 처리하지 못했어요.")


def failure_reply(result: ToolMessage, language: str) -> str:
    """Say, for the person, why a tool failed (never the error text the model was given)."""
    failure = result.artifact if isinstance(result.artifact, dict) else {}
    english, korean = FAILURE_REPLIES.get(str(failure.get("code")), FAILURE_FALLBACK)
    return fill(korean if language == "ko" else english, failure.get("params") or {})


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
        excerpt = system.split("\n(1) ", 1)[-1][:400]
        lead = "문서에서 찾은 내용입니다" if language == "ko" else "From your documents"
        return f"{lead}: (1) {excerpt}", []
    heard = "받은 메시지" if language == "ko" else "You wrote"
    return f"{notice} {heard}: “{text[:200]}”", []


def compose_reply(
    messages: Sequence[BaseMessage],
    tools: Sequence[dict[str, Any]] | None = None,
    tool_choice: Any = None,
) -> AIMessage:
    """Return the offline model's whole reply to `messages` (deterministic)."""
    names = _tool_names(tools)
    system = _system_text(messages)
    if tool_choice and names:
        args = route_args(_last_human(messages)) if names[0] == "RouteDecision" else {}
        content, calls = "", [_call(names[0], args, 0)]
    elif system.startswith(prompts.SUMMARIZER_MARKER):
        content, calls = summary_reply(system, _last_human(messages)), []
    elif messages and isinstance(messages[-1], ToolMessage):
        content, calls = _tool_answer(messages, detect_language([_last_human(messages)])), []
    else:
        content, calls = _conversation_reply(messages, names)
    usage = {
        "input_tokens": estimate_message_tokens(messages) + _schema_tokens(tools),
        "output_tokens": estimate_tokens(content) + 8 * len(calls),
    }
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    return AIMessage(
        content=content,
        tool_calls=calls,
        usage_metadata=usage,
        response_metadata={
            "finish_reason": "tool_calls" if calls else "stop",
            "model_name": OFFLINE_MODEL_NAME,
        },
    )


class OfflineChatModel(BaseChatModel):
    """A chat model that answers from rules, so the app works with no LLM server."""

    chars_per_second: float = 400.0
    model_name: str = OFFLINE_MODEL_NAME

    @property
    def _llm_type(self) -> str:
        return "offline"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable | Any],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools in OpenAI format, as ChatOpenAI does."""
        formatted = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = compose_reply(messages, kwargs.get("tools"), kwargs.get("tool_choice"))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        reply = compose_reply(messages, kwargs.get("tools"), kwargs.get("tool_choice"))
        yield from (ChatGenerationChunk(message=chunk) for chunk in _chunks(reply))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        reply = compose_reply(messages, kwargs.get("tools"), kwargs.get("tool_choice"))
        for chunk in _chunks(reply):
            if self.chars_per_second > 0 and isinstance(chunk.content, str):
                await asyncio.sleep(len(chunk.content) / self.chars_per_second)
            yield ChatGenerationChunk(message=chunk)


def _chunks(reply: AIMessage) -> list[AIMessageChunk]:
    """Split a reply into word-sized stream chunks; usage rides on the last one."""
    pieces = re.findall(r"\S+\s*|\s+", str(reply.content)) or [""]
    chunks = [AIMessageChunk(content=piece) for piece in pieces]
    chunks[-1] = AIMessageChunk(
        content=pieces[-1],
        tool_call_chunks=[
            {"name": c["name"], "args": _json(c["args"]), "id": c["id"], "index": i}
            for i, c in enumerate(reply.tool_calls)
        ],
        usage_metadata=reply.usage_metadata,
        response_metadata=reply.response_metadata,
    )
    return chunks


def _schema_tokens(tools: Sequence[dict[str, Any]] | None) -> int:
    """Estimate the prompt tokens of bound tool definitions."""
    return estimate_tokens(json.dumps(list(tools))) if tools else 0


def _json(value: Any) -> str:
    """Serialize tool arguments the way a server streams them."""
    return json.dumps(value, ensure_ascii=False)
