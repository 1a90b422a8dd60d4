"""The built-in offline chat model: deterministic, no network, streams, calls tools."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool

from agent.offline_answers import answer
from agent.tokens import estimate_message_tokens, estimate_tokens

OFFLINE_MODEL_NAME = "offline"


def _tool_names(tools: Sequence[dict[str, Any]] | None) -> list[str]:
    """Return the function names of bound OpenAI-format tools."""
    return [t["function"]["name"] for t in tools or [] if "function" in t]


def compose_reply(
    messages: Sequence[BaseMessage],
    tools: Sequence[dict[str, Any]] | None = None,
    tool_choice: Any = None,
) -> AIMessage:
    """Return the offline model's whole reply to `messages` (deterministic)."""
    content, calls = answer(messages, _tool_names(tools), tool_choice)
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
