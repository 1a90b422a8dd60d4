"""The chat model: ChatOpenAI against an OpenAI-compatible server, or the offline model."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any
from urllib.parse import urlsplit

import httpx2
import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from agent import capabilities, incoming, windows
from agent.config import AgentConfig
from agent.model_errors import context_refusal, refused_parameter
from agent.offline import OFFLINE_MODEL_NAME, OfflineChatModel
from agent.reasoning import without_thinking

__all__ = ["OFFLINE_MODEL_NAME", "OfflineChatModel", "build_chat_model", "get_chat_model"]

# httpx async clients hold connections bound to the loop that opened them, so every
# event loop gets its own models (tests run one loop per test; Daphne has one).
_MODELS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[AgentConfig, BaseChatModel]]
_MODELS = weakref.WeakKeyDictionary()
# aiohttp's default pool stops at 100 connections: the 101st concurrent reply would wait
# for another to finish before its request even left.
HTTP_LIMITS = httpx2.Limits(max_connections=100_000, max_keepalive_connections=100)


def build_chat_model(config: AgentConfig) -> BaseChatModel:
    """Build the chat model `config` asks for (call inside the loop that will use it)."""
    if config.offline:
        return OfflineChatModel(chars_per_second=config.offline_chars_per_second)
    return ChatOpenAI(
        model=config.model,
        api_key=config.openai_api_key,
        base_url=config.openai_base_url,
        stream_usage=True,
        timeout=config.request_timeout,
        max_retries=config.max_retries,
        temperature=config.temperature,
        # aiohttp transport: see pyproject.toml (httpx's anyio stream cost two epoll calls
        # per streamed event).
        http_async_client=openai.DefaultAioHttpClient(
            timeout=config.request_timeout, limits=HTTP_LIMITS
        ),
    )


def get_chat_model(config: AgentConfig) -> BaseChatModel:
    """Return this loop's cached chat model for `config`."""
    loop = asyncio.get_running_loop()
    models = _MODELS.setdefault(loop, {})
    if config not in models:
        models[config] = build_chat_model(config)
    return models[config]


def bounded(model: Any, max_tokens: int) -> Any:
    """Return `model` answering at most `max_tokens` (an internal request never holds a
    one-slot local server for long), without the parameters its server refused."""
    if not isinstance(model, ChatOpenAI):
        return model
    refused = capabilities.refused_parameters(capabilities.server_of(model))
    # langchain-openai sends `max_completion_tokens`, which OpenAI's reasoning models need
    # and which llama.cpp's and llama-cpp-python's servers do not read: they get the older
    # `max_tokens`, as every OpenAI-compatible server reads it.
    if _speaks_openai_itself(model.openai_api_base):
        update: dict[str, Any] = {"max_tokens": max_tokens}
    else:
        update = {"extra_body": {**(model.extra_body or {}), "max_tokens": max_tokens}}
    update.update({name: None for name in refused if name in ChatOpenAI.model_fields})
    return model.model_copy(update=update)  # shares the client: nothing is opened again


def _speaks_openai_itself(base_url: str | None) -> bool:
    """Say whether a base URL is OpenAI's own API (or Azure's), not a compatible server."""
    host = urlsplit(base_url or "https://api.openai.com/v1").hostname or ""
    return host == "api.openai.com" or host.endswith(".openai.azure.com")


async def ask_model(
    model: Any,
    messages: list[BaseMessage],
    *,
    max_tokens: int,
    config: dict[str, Any] | None = None,
) -> AIMessage:
    """Call the model once, not streamed (summaries, titles, digests), as text a row can hold,
    at most `max_tokens` long, without the `<think>` block a reasoning model may start with.

    A parameter the server refuses (a reasoning model's `temperature`) is left out and the
    call made again, once. Callers bound the whole call
    (`asyncio.timeout(config.request_timeout)`): the client's own timeout applies per try,
    and it tries max_retries + 1 times.
    """
    llm = bounded(model, max_tokens)
    try:
        reply = await llm.ainvoke(messages, config=config)
    except openai.BadRequestError as exc:
        too_long = context_refusal(exc)
        if too_long is not None and isinstance(llm, ChatOpenAI):
            if too_long.window:  # the next turn's memory measures against it
                windows.remember(llm.openai_api_base, llm.model_name, too_long.window)
            raise too_long from exc
        param = refused_parameter(exc)
        if param is None or not isinstance(llm, ChatOpenAI) or param not in llm.model_fields:
            raise
        capabilities.mark_refused(capabilities.server_of(llm), param)
        reply = await bounded(model, max_tokens).ainvoke(messages, config=config)
    if not isinstance(reply, AIMessage):
        reply = AIMessage(content=str(reply))
    if isinstance(reply.content, str):
        reply = reply.model_copy(update={"content": without_thinking(reply.content)})
    return incoming.clean_message(reply)


async def ask_configured(
    config: AgentConfig,
    system: str,
    request: str,
    *,
    max_tokens: int,
    run_config: dict[str, Any],
) -> AIMessage:
    """`ask_model` on the configured model with one instruction and one request, the whole
    call (retries included) bounded by `config.request_timeout` (titles, digests)."""
    model = get_chat_model(config)
    async with asyncio.timeout(config.request_timeout):
        return await ask_model(
            model,
            [SystemMessage(system), HumanMessage(request)],
            max_tokens=max_tokens,
            config=run_config,
        )


def model_label(config: AgentConfig) -> str:
    """Return the model name recorded on replies."""
    return OFFLINE_MODEL_NAME if config.offline else config.model
