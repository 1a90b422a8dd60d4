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
from agent.tokens import detect_language, estimate_message_tokens, estimate_tokens, message_text

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
        if result.status == "error" or text.startswith("Error"):
            lines.append(
                f"도구 {result.name} 실행 중 오류가 났습니다: {text}"
                if language == "ko"
                else f"The {result.name} tool failed: {text}"
            )
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
            lines.append(f"지웠어요. {text}" if language == "ko" else text)
        elif result.name == "get_current_datetime":
            lines.append(f"현재 시각은 {text}입니다." if language == "ko" else f"It is now {text}.")
        else:
            lines.append(text)
    return "\n".join(lines)


def recall(topic: str, messages: Sequence[BaseMessage]) -> str | None:
    """Find what the user said about `topic` in the summaries and earlier messages."""
    words = intents.keywords(topic)
    if not words:
        return None
    sources = [message_text(m) for m in messages[:-1] if isinstance(m, HumanMessage)][::-1]
    sources.append(_system_text(messages))
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
