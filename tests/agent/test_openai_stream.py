"""The model's stream read as plain JSON gives the agent what ChatOpenAI.astream gives."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    message_chunk_to_message,
)

from agent.completion_events import ModelSilent, ModelStreamCut, ModelStreamError
from agent.llm import build_chat_model
from agent.openai_stream import StreamTimeouts, astream_message
from agent.tools.calculator import calculator
from agent.tools.clock import get_current_datetime
from tests.support.openai_replies import Reply, ToolCall

PROMPT = [SystemMessage("Be brief."), HumanMessage("안녕, what is 2 + 2?")]
TOOLS = [calculator, get_current_datetime]


async def through_langchain(llm: Any, tools: list) -> AIMessage:
    """The reference: LangChain's own stream, merged chunk by chunk."""
    model = llm.bind_tools(tools) if tools else llm
    merged: AIMessageChunk | None = None
    async for chunk in model.astream(PROMPT):
        merged = chunk if merged is None else merged + chunk
    assert merged is not None
    message = message_chunk_to_message(merged)
    assert isinstance(message, AIMessage)
    return message


async def both(online_config, fake_openai, reply: Reply, tools: list):
    llm = build_chat_model(online_config)
    fake_openai.enqueue(reply, reply)
    pieces: list[str] = []
    ours = await astream_message(llm, PROMPT, tools=tools, on_text=pieces.append)
    reference = await through_langchain(llm, tools)
    return ours, reference, pieces


async def test_a_text_reply_arrives_piece_by_piece_and_whole(online_config, fake_openai):
    reply = Reply(text="Four. 넷입니다, as the calculator would say.", chunk_chars=3)
    ours, reference, pieces = await both(online_config, fake_openai, reply, [])
    assert len(pieces) > 5  # handed on as the server sent them, not at the end
    assert "".join(pieces) == ours.content == reference.content
    assert ours.usage_metadata is not None and reference.usage_metadata is not None
    for key in ("input_tokens", "output_tokens", "total_tokens"):
        assert ours.usage_metadata[key] == reference.usage_metadata[key]
    assert ours.response_metadata["finish_reason"] == "stop"
    assert ours.response_metadata["finish_reason"] == reference.response_metadata["finish_reason"]
    # The same request went over the wire both times.
    assert fake_openai.requests[0] == fake_openai.requests[1]
    assert fake_openai.requests[0]["stream_options"] == {"include_usage": True}


async def test_tool_calls_are_assembled_as_langchain_does(online_config, fake_openai):
    reply = Reply(
        tool_calls=[
            ToolCall("calculator", {"expression": "2 + 2"}),
            ToolCall("get_current_datetime"),
        ]
    )
    ours, reference, pieces = await both(online_config, fake_openai, reply, TOOLS)
    assert pieces == [] and ours.content == ""

    def calls(message: AIMessage) -> list[tuple]:
        return [(c["name"], c["args"], c["id"]) for c in message.tool_calls]

    assert calls(ours) == calls(reference)
    assert [c["name"] for c in ours.tool_calls] == ["calculator", "get_current_datetime"]
    assert ours.response_metadata["finish_reason"] == "tool_calls"
    assert [t["function"]["name"] for t in fake_openai.requests[0]["tools"]] == [
        "calculator",
        "get_current_datetime",
    ]
    assert fake_openai.requests[0] == fake_openai.requests[1]


async def test_malformed_tool_arguments_are_read_as_langchain_reads_them(
    online_config, fake_openai
):
    reply = Reply(tool_calls=[ToolCall("calculator", "{not json")])
    ours, reference, _ = await both(online_config, fake_openai, reply, TOOLS)
    assert [(c["name"], c["args"]) for c in ours.tool_calls] == [
        (c["name"], c["args"]) for c in reference.tool_calls
    ]
    assert [c["args"] for c in ours.invalid_tool_calls] == [
        c["args"] for c in reference.invalid_tool_calls
    ]
    assert ours.tool_calls or ours.invalid_tool_calls  # the call is not silently lost


async def test_every_message_gets_its_own_id_even_when_the_server_repeats_one(
    online_config, fake_openai
):
    llm = build_chat_model(online_config)
    fake_openai.enqueue("one", "two")  # the fake answers every request as "chatcmpl-fake"
    first = await astream_message(llm, PROMPT, tools=[], on_text=lambda _: None)
    second = await astream_message(llm, PROMPT, tools=[], on_text=lambda _: None)
    assert first.id != second.id
    assert first.response_metadata["id"] == second.response_metadata["id"]


async def test_an_error_inside_the_stream_is_raised_after_the_text_so_far(
    online_config, fake_openai
):
    llm = build_chat_model(online_config)
    fake_openai.enqueue(Reply(text="partial answer", stream_error="upstream overloaded"))
    pieces: list[str] = []
    with pytest.raises(ModelStreamError, match="upstream overloaded"):
        await astream_message(llm, PROMPT, tools=[], on_text=pieces.append)
    assert "".join(pieces) == "partial answer"


@pytest.mark.parametrize("done", [True, False], ids=["then-done", "no-done"])
async def test_a_stream_without_a_finish_reason_is_cut_after_the_text_so_far(
    online_config, fake_openai, done
):
    llm = build_chat_model(online_config)
    fake_openai.enqueue(Reply(text="half an ans", finish=False, done=done))
    pieces: list[str] = []
    with pytest.raises(ModelStreamCut):
        await astream_message(llm, PROMPT, tools=[], on_text=pieces.append)
    assert "".join(pieces) == "half an ans"


async def test_a_finished_stream_without_done_is_whole(online_config, fake_openai):
    llm = build_chat_model(online_config)
    fake_openai.enqueue(Reply(text="all of it", done=False))
    message = await astream_message(llm, PROMPT, tools=[], on_text=lambda _: None)
    assert message.content == "all of it"
    assert message.response_metadata["finish_reason"] == "stop"


async def test_an_event_that_is_not_json_fails_the_stream_after_the_text_so_far(
    online_config, fake_openai
):
    llm = build_chat_model(online_config)
    fake_openai.enqueue(Reply(text="partial answer", malformed="{oops"))
    pieces: list[str] = []
    with pytest.raises(ModelStreamError, match="not JSON"):
        await astream_message(llm, PROMPT, tools=[], on_text=pieces.append)
    assert "".join(pieces) == "partial answer"


async def test_a_server_that_sends_nothing_is_given_up_on_after_the_first_byte_timeout(
    online_config, fake_openai
):
    llm = build_chat_model(replace(online_config, max_retries=2))  # no retry waits longer
    fake_openai.enqueue(Reply(hang=True), Reply(hang=True), Reply(hang=True))
    started = time.monotonic()
    with pytest.raises(ModelSilent) as silent:
        await astream_message(
            llm, PROMPT, tools=[], on_text=lambda _: None, timeouts=StreamTimeouts(0.5, 5)
        )
    assert 0.5 <= time.monotonic() - started < 1.5
    assert (silent.value.code, silent.value.params) == ("model.timed_out", {"seconds": "0.5"})
    await _until(lambda: fake_openai.disconnects == 1)  # the connection was let go


async def test_a_server_that_falls_silent_mid_stream_is_given_up_on_after_the_idle_timeout(
    online_config, fake_openai
):
    llm = build_chat_model(online_config)
    fake_openai.enqueue(Reply(text="the first words and", chunk_chars=4, stall_after_chunks=3))
    pieces: list[str] = []
    started = time.monotonic()
    with pytest.raises(ModelSilent) as silent:
        await astream_message(
            llm, PROMPT, tools=[], on_text=pieces.append, timeouts=StreamTimeouts(5, 0.5)
        )
    assert 0.4 <= time.monotonic() - started < 1.5
    assert (silent.value.code, silent.value.params) == ("model.stalled", {"seconds": "0.5"})
    assert "".join(pieces) == "the first wo"


async def test_a_slow_but_steady_stream_is_not_cut_by_the_idle_timeout(online_config, fake_openai):
    llm = build_chat_model(online_config)
    text = "steady words, " * 10  # ~1.4 s in all, one piece every 0.1 s
    fake_openai.enqueue(Reply(text=text, chunk_chars=4, chars_per_second=40, delay=0.3))
    message = await astream_message(
        llm, PROMPT, tools=[], on_text=lambda _: None, timeouts=StreamTimeouts(0.5, 0.5)
    )
    assert message.content == text


async def _until(check, seconds: float = 3.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    assert check()


async def test_lines_split_anywhere_in_the_body_come_out_whole():
    from agent.model_body import lines as _lines

    async def body():
        # Cut mid-line, between CR and LF, inside a Korean character's bytes, and at the end
        # without a final newline.
        for chunk in (
            b'data: {"t": "\xea',
            b'\xb0\x80"}\r',
            b"\n\r\n",
            b"data: x\n",
            b"\n: ping\ndata: end",
        ):
            yield chunk

    chunks = body()
    assert [line async for line in _lines(lambda: anext(chunks, b""))] == [
        'data: {"t": "가"}',
        "",
        "data: x",
        "",
        ": ping",
        "data: end",
    ]


async def test_the_body_is_read_from_aiohttp_and_a_cut_is_httpxs_error(
    online_config, fake_openai, monkeypatch
):
    """The model's body is read straight from aiohttp's reader (no httpx generators in
    between), and a connection cut mid-body still surfaces as the error httpx raises."""
    import httpx2

    from agent import model_body

    used = []
    real = model_body.reader

    def spy(response):
        read = real(response)
        used.append(read.__qualname__)
        return read

    monkeypatch.setattr(model_body, "reader", spy)
    llm = build_chat_model(online_config)
    fake_openai.enqueue(Reply(text="Four, or 넷.", chunk_chars=2))
    message = await astream_message(llm, PROMPT, tools=[], on_text=lambda _t: None)
    assert message.content == "Four, or 넷."
    assert used == ["reader.<locals>.read"]  # aiohttp's, not httpx's `anext` lambda

    class Cut:
        async def readany(self):
            raise __import__("aiohttp").ClientPayloadError("connection lost mid-body")

    stream = model_body.AiohttpResponseStream.__new__(model_body.AiohttpResponseStream)
    stream._aiohttp_response = type("R", (), {"content": Cut()})()
    response = type("Resp", (), {"stream": type("S", (), {"_stream": stream})(), "headers": {}})()
    with pytest.raises(httpx2.HTTPError):
        await real(response)()


async def test_a_compressed_stream_is_read_through_httpx_decompression(online_config):
    """A proxy that gzips the event stream: the body goes through httpx, which decompresses
    it (the SDK's aiohttp transport leaves decompression to httpx)."""
    import gzip
    import json as jsonlib
    from dataclasses import replace

    from aiohttp import web

    events = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "압축된 "}}]},
        {"choices": [{"index": 0, "delta": {"content": "answer"}, "finish_reason": "stop"}]},
    ]
    body = "".join(f"data: {jsonlib.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"

    async def completions(_request):
        return web.Response(
            body=gzip.compress(body.encode()),
            headers={"Content-Type": "text/event-stream", "Content-Encoding": "gzip"},
        )

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        llm = build_chat_model(
            replace(online_config, openai_base_url=f"http://127.0.0.1:{port}/v1")
        )
        pieces: list[str] = []
        message = await astream_message(llm, PROMPT, tools=[], on_text=pieces.append)
    finally:
        await runner.cleanup()
    assert message.content == "압축된 answer" == "".join(pieces)


def test_an_event_json_reads_but_orjson_refuses_is_still_read():
    from agent.completion_events import event as _event

    event = _event('{"choices": [], "logprob": -Infinity, "score": NaN}')
    assert event["choices"] == [] and event["score"] != event["score"]  # NaN
    with pytest.raises(ModelStreamError):
        _event("not json at all")
