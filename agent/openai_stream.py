"""Stream one chat completion, handing each text delta to a callback; build the message once.

`ChatOpenAI.astream` pays, for every event the server sends, an openai pydantic chunk, a
LangChain `AIMessageChunk`, a callback dispatch and a merge into the chunks before it:
profiled under 50 streams at 50 tokens/s that was 35–40% of the server's CPU, for
objects nobody reads. Here the request is the one `ChatOpenAI` itself would send (its
payload builder, its openai client: base URL, key, timeout, retries), each event is read
as plain JSON, and LangChain objects are built once, for the whole message (tool calls
and usage included), so the agent, tools and checkpoints see exactly what `astream`
would have given them.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import openai
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import BaseTool
from langchain_openai import ChatOpenAI

from agent import capabilities, model_body
from agent.completion_events import (
    Completion,
    ModelSilent,
    ModelStreamCut,
    OnText,
    event,
)
from agent.model_errors import context_refusal, refused_parameter
from agent.progress import emit_step

logger = logging.getLogger(__name__)
# A 429 is waited out at most this many times, this long in all (SPEC "Rate limits").
RATE_LIMIT_TRIES = 3
RATE_LIMIT_SECONDS = 60.0
WAITING_STEP_SECONDS = 10.0  # "Waiting for the model… 40 s", said this often


def _ignore(text: str) -> None:
    pass


@dataclass(frozen=True)
class StreamTimeouts:
    """How long a silent model server is waited for: its first byte (the answer's headers
    and first line, the SDK's retries included), then each next line. None: no limit."""

    first_byte: float | None
    idle: float | None


def request_payload(
    llm: ChatOpenAI, messages: Sequence[BaseMessage], tools: Sequence[BaseTool]
) -> dict[str, Any]:
    """Return the streaming request `llm.bind_tools(tools).astream(messages)` would send."""
    kwargs: dict[str, Any] = dict(llm.bind_tools(tools).kwargs) if tools else {}  # type: ignore[attr-defined]
    kwargs["stream"] = True
    if llm._should_stream_usage(None):
        kwargs["stream_options"] = {"include_usage": True}
    return llm._get_request_payload(list(messages), **kwargs)


async def astream_message(
    llm: ChatOpenAI,
    messages: Sequence[BaseMessage],
    *,
    tools: Sequence[BaseTool],
    on_text: OnText,
    on_reasoning: OnText = _ignore,
    timeouts: StreamTimeouts | None = None,
) -> AIMessage:
    """Stream one completion, calling `on_text` with each text delta and `on_reasoning`
    with each reasoning delta (either field servers use); return the message, whose
    content is the text alone.

    The server is met as it is: a parameter it refuses (a reasoning model's `temperature`)
    is left out, now and for that model from then on; a 429 is waited out as it asks
    (RATE_LIMIT_TRIES, RATE_LIMIT_SECONDS in all), the person told the server is busy; a
    refused connection or a 5xx before the stream began is tried again (the client's
    `max_retries`). A prompt refused as too long raises ModelContextExceeded.
    Raises ModelSilent when the server stays silent past `timeouts` (the SDK's timeout
    alone, per attempt and retried, would keep a reply waiting for minutes).
    """
    payload = request_payload(llm, messages, tools)
    server = capabilities.server_of(llm)
    for param in capabilities.refused_parameters(server):
        payload.pop(param, None)
    waited, busy, failures = 0.0, 0, 0
    asking_why = stale = False
    while True:
        reply = Completion()
        try:
            if asking_why:
                return await _complete_once(llm, dict(payload), reply, on_text, on_reasoning)
            return await _stream_once(llm, dict(payload), reply, on_text, on_reasoning, timeouts)
        except ModelStreamCut:
            if reply.heard or asking_why:
                raise
            # 200 and not one event: llama-cpp-python's answer to a prompt past its window
            # when streaming. The same request, not streamed, says why (or just answers).
            asking_why = True
        except openai.APIStatusError as exc:
            if reply.heard:
                raise
            refusal = context_refusal(exc)
            if refusal is not None:
                raise refusal from exc
            param = refused_parameter(exc)
            if param is not None and param in payload:
                logger.info("%s refuses %r: sent again without it", server, param)
                capabilities.mark_refused(server, param)
                del payload[param]
                continue
            if not isinstance(exc, openai.RateLimitError | openai.InternalServerError):
                raise
            if isinstance(exc, openai.InternalServerError):
                failures += 1
                if failures > llm.max_retries:
                    raise
                await asyncio.sleep(min(8.0, 0.5 * 2**failures))
                continue
            wait = retry_after(exc)
            busy += 1
            if busy > RATE_LIMIT_TRIES or waited + wait > RATE_LIMIT_SECONDS:
                raise
            waited += wait
            emit_step("model.busy", seconds=f"{max(1, round(wait)):d}")
            await asyncio.sleep(wait)
        except openai.APIConnectionError as exc:
            if reply.heard:
                raise
            if _stale_connection(exc) and not stale:
                stale = True  # a pooled connection the server had closed: at once, once
                continue
            failures += 1
            if failures > llm.max_retries:
                raise
            await asyncio.sleep(min(8.0, 0.5 * 2**failures))


_STALE = frozenset({"ServerDisconnectedError", "ClientConnectionResetError", "ClientOSError"})


def _stale_connection(error: BaseException) -> bool:
    """Say whether a connection error is a kept-alive connection the server had closed
    (aiohttp found it closed, or closing, before a byte of the answer)."""
    while error is not None:
        if type(error).__name__ in _STALE:
            return True
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return False


def retry_after(error: openai.APIStatusError) -> float:
    """Return how long a 429 asks to wait (`retry-after-ms`, `retry-after`; 1 s if it
    does not say, as the SDK waits)."""
    headers = error.response.headers
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / scale)
        except ValueError:  # an HTTP date: waited as if unsaid
            continue
    return 1.0


async def _stream_once(
    llm: ChatOpenAI,
    payload: dict[str, Any],
    reply: Completion,
    on_text: OnText,
    on_reasoning: OnText,
    timeouts: StreamTimeouts | None,
) -> AIMessage:
    """Send the request once and read its stream into `reply`."""
    # The SDK walks typed parameters through its annotation-driven transform: 2–3 ms of
    # blocking CPU for a ten-message prompt, at every start of every reply. The payload is
    # already in wire form (LangChain built it), so it goes as `extra_body`, which the
    # SDK documents as sent as given and taking precedence over the typed arguments.
    # Retries are ours (astream_message): a 429 is waited out with a step the person sees.
    model, stream = payload.pop("model"), payload.pop("stream")
    completions = _without_retries(llm.root_async_client).chat.completions
    request = completions.with_streaming_response.create(
        model=model, messages=[], stream=stream, extra_body=payload
    )
    first_byte, idle = (timeouts.first_byte, timeouts.idle) if timeouts else (None, None)
    loop = asyncio.get_running_loop()
    heard = False
    waiting = loop.create_task(_say_while_waiting(loop.time()))
    try:
        async with asyncio.timeout(first_byte) as silence, request as response:
            data: list[str] = []
            async for line in model_body.lines(model_body.reader(response.http_response)):
                if not heard or idle is not None:
                    if not heard:
                        waiting.cancel()
                    _push_back(silence, loop.time(), idle, first=not heard)
                    heard = True
                if line.startswith("data:"):
                    data.append(line[6:] if line.startswith("data: ") else line[5:])
                    continue
                if line or not data:
                    continue  # a comment, an `event:`/`id:` field, or a stray blank line
                joined, data = "\n".join(data), []
                if joined.strip() == "[DONE]":
                    break
                reply.absorb(event(joined), on_text, on_reasoning)
            else:
                if data and "\n".join(data).strip() != "[DONE]":
                    reply.absorb(event("\n".join(data)), on_text, on_reasoning)
    except TimeoutError as exc:
        if not silence.expired():
            raise  # not ours: a timeout inside the client
        seconds = (idle if heard else first_byte) or 0.0
        raise ModelSilent(mid_stream=heard, seconds=seconds) from exc
    finally:
        waiting.cancel()
    if reply.finish_reason is None:
        # Whether or not `[DONE]` came: without a finish reason the reply is not whole.
        raise ModelStreamCut("the model server ended the stream without a finish reason")
    return reply.message()


async def _complete_once(
    llm: ChatOpenAI,
    payload: dict[str, Any],
    reply: Completion,
    on_text: OnText,
    on_reasoning: OnText,
) -> AIMessage:
    """Send the request once, not streamed, and read its answer into `reply` as one event."""
    model = payload.pop("model")
    payload.pop("stream", None)
    payload.pop("stream_options", None)
    completions = _without_retries(llm.root_async_client).chat.completions
    answer = (await completions.create(model=model, messages=[], extra_body=payload)).model_dump()
    event: dict[str, Any] = {k: answer.get(k) for k in ("id", "model", "usage")}
    choices = []
    for choice in answer.get("choices") or ():
        message = dict(choice.get("message") or {})
        calls = message.get("tool_calls") or []
        message["tool_calls"] = [{**call, "index": i} for i, call in enumerate(calls)]
        choices.append({**choice, "delta": message})
    reply.absorb({**event, "choices": choices}, on_text, on_reasoning)
    if reply.finish_reason is None:
        raise ModelStreamCut("the model server answered without a finish reason")
    return reply.message()


_once: weakref.WeakKeyDictionary[openai.AsyncOpenAI, openai.AsyncOpenAI]
_once = weakref.WeakKeyDictionary()


def _without_retries(client: openai.AsyncOpenAI) -> openai.AsyncOpenAI:
    """Return `client` (its HTTP connections shared) sending each request once."""
    once = _once.get(client)
    if once is None:
        once = _once[client] = client.with_options(max_retries=0)
    return once


async def _say_while_waiting(since: float) -> None:
    """Tell the person, every WAITING_STEP_SECONDS, how long the model has been reading
    the prompt (a CPU server may take minutes before its first byte)."""
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(WAITING_STEP_SECONDS)
        emit_step("model.waiting", seconds=f"{round(loop.time() - since):d}")


def _push_back(silence: asyncio.Timeout, now: float, idle: float | None, *, first: bool) -> None:
    """Move the silence deadline to `idle` seconds from now (no deadline if None): at the
    first line, then whenever it has come a little closer (no timer churn per token)."""
    if idle is None:
        silence.reschedule(None)
        return
    when = silence.when()
    if first or when is None or when < now + idle - min(1.0, idle / 10):
        silence.reschedule(now + idle)
