"""One turn as events: streaming, ids, ledger, routing, stop, failures."""

from __future__ import annotations

import asyncio
import socket
import time
from dataclasses import replace

from agent.threads import read_thread
from tests.agent.helpers import is_summarizer_request, make_turn, new_id, run_one
from tests.support.openai_replies import Reply, ToolCall, forced_tool, message_texts

LONG = "The quick brown fox jumps over the lazy dog. " * 20


async def test_token_indexes_are_character_offsets(online_config, saver):
    result = await run_one(online_config, saver, new_id(), "안녕 세계, hello world")
    text = ""
    for event in result.of_type("token"):
        assert event["index"] == len(text)
        text += event["text"]
    assert text == result.finished["content"] == "Echo: 안녕 세계, hello world"
    assert [e["type"] for e in result.events].count("finished") == 1


async def test_checkpoint_ids_equal_the_callers_ids(online_config, saver, fake_openai):
    thread, user_id, reply_id = new_id(), new_id(), new_id()
    result = await run_one(
        online_config, saver, thread, "hi", user_message_id=user_id, reply_id=reply_id
    )
    memory = await read_thread(saver, thread)
    assert memory["message_ids"] == [user_id, reply_id]
    assert result.finished["message_id"] == reply_id
    context = result.finished["context"]
    assert context["message_ids"] == [user_id]
    assert context["actual_input_tokens"] == result.finished["usage"]["input_tokens"] > 0
    assert (
        context["estimated_input_tokens"] > 0 and context["window"] == online_config.context_window
    )


async def test_usage_sums_the_main_model_calls(online_config, saver, fake_openai):
    fake_openai.enqueue(
        Reply(tool_calls=[ToolCall("calculator", {"expression": "2+2"})], prompt_tokens=100),
        Reply(text="4", prompt_tokens=150),
    )
    result = await run_one(online_config, saver, new_id(), "2+2")
    assert result.finished["usage"]["input_tokens"] == 250
    assert result.finished["context"]["usage_estimated"] is False


async def test_a_server_that_reports_no_usage_gets_estimates_marked_as_such(
    online_config, saver, fake_openai
):
    fake_openai.enqueue(Reply(text="Four words of answer.", send_usage=False))
    result = await run_one(online_config, saver, new_id(), "Say something short.")
    assert result.finished["finish_reason"] == "end_turn"
    context, usage = result.finished["context"], result.finished["usage"]
    assert context["usage_estimated"] is True and context["actual_input_tokens"] is None
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0  # estimates, not zeros


async def test_router_llm_decides_when_the_evidence_is_weak_and_rag_sends_sources(
    online_config, saver, fake_openai
):
    async def retriever(query: str, k: int) -> list[dict]:
        return [
            {
                "document_id": "d1",
                "document_title": "Handbook",
                "section": "Leave",
                "snippet": "15 days",
                "score": 0.2,  # below the calibrated threshold: the model is asked
                "text": "Annual leave is 15 days.",
            }
        ]

    fake_openai.enqueue(
        Reply(tool_calls=[ToolCall("RouteDecision", {"route": "rag", "reason": "policy"})]),
        "You get 15 days of annual leave.",
    )
    result = await run_one(
        online_config,
        saver,
        new_id(),
        "회사 휴가 정책이 뭐야?",
        retriever=retriever,
        has_documents=True,
    )
    [route] = result.steps("route")
    assert (route["code"], route["params"]) == ("route.documents", {"by": "llm", "reason": "model"})
    assert route["content"] == "Decided to search your documents"
    assert result.of_type("sources")[0]["items"][0]["document_id"] == "d1"
    assert "Annual leave is 15 days." in fake_openai.requests[1]["messages"][0]["content"]
    assert result.finished["context"]["documents"] == ["d1"]
    assert any(p["type"] == "references" for p in result.finished["parts"])
    assert result.text == "You get 15 days of annual leave."  # router tokens never reach the user
    assert result.finished["context"]["internal_usage"]["calls"] == 1


async def test_strong_evidence_sends_the_passages_whatever_the_model_would_vote(
    online_config, saver, fake_openai
):
    # A small local model votes "no documents" for plain document questions: it is not
    # asked when retrieval's own score is past the calibrated threshold.
    fake_openai.responder = lambda body: (
        Reply(tool_calls=[ToolCall("RouteDecision", {"route": "agent", "reason": "chat"})])
        if forced_tool(body)
        else Reply(text="You get 15 days.")
    )

    async def retriever(query: str, k: int) -> list[dict]:
        return [{"document_id": "d1", "snippet": "15 days", "score": 0.9, "text": "15 days."}]

    result = await run_one(
        online_config, saver, new_id(), "연차는 며칠이야?", retriever=retriever, has_documents=True
    )
    [route] = result.steps("route")
    assert (route["code"], route["params"]["by"]) == ("route.documents", "score")
    assert not any(forced_tool(body) for body in fake_openai.requests)  # no vote asked
    assert "15 days." in " ".join(message_texts(fake_openai.requests[-1], "system"))


async def test_a_silent_router_is_not_waited_out_and_the_weak_evidence_is_left(
    online_config, saver, fake_openai
):
    async def retriever(query: str, k: int) -> list[dict]:
        return [{"document_id": "d1", "snippet": "15 days", "score": 0.2, "text": "15 days."}]

    fake_openai.enqueue(Reply(hang=True), "You get 15 days.")
    config = replace(online_config, first_byte_timeout=0.5)
    started = time.monotonic()
    result = await run_one(
        config, saver, new_id(), "회사 휴가 정책이 뭐야?", retriever=retriever, has_documents=True
    )
    assert time.monotonic() - started < 2.0
    [route] = result.steps("route")
    assert (route["code"], route["params"]["by"]) == ("route.direct", "score")
    assert (result.finished["finish_reason"], result.text) == ("end_turn", "You get 15 days.")


async def test_rules_route_greetings_without_an_llm_call(online_config, saver, fake_openai):
    result = await run_one(online_config, saver, new_id(), "안녕하세요", has_documents=True)
    [route] = result.steps("route")
    assert (route["code"], route["params"]) == (
        "route.direct",
        {"by": "rule", "reason": "greeting"},
    )
    assert len(fake_openai.requests) == 1


async def test_summarizer_tokens_never_reach_the_user(online_config, saver, fake_openai):
    thread = new_id()
    for n in range(6):
        result = await run_one(online_config, saver, thread, f"message number {n}")
        assert result.text == f"Echo: message number {n}"
    assert any(is_summarizer_request(b) for b in fake_openai.requests)


async def test_stop_keeps_the_partial_reply_in_memory(online_config, saver, fake_openai):
    thread, reply_id = new_id(), new_id()
    fake_openai.enqueue(Reply(text=LONG, chars_per_second=400))
    turn = make_turn(online_config, saver, thread, "tell me a story", reply_id=reply_id)
    events = []
    async for event in turn.events():
        events.append(event)
        if event["type"] == "token" and event["index"] >= 40:
            await turn.stop()
    finished = events[-1]
    streamed = "".join(e["text"] for e in events if e["type"] == "token")
    assert finished["finish_reason"] == "stopped"
    assert finished["content"] == streamed and 40 <= len(streamed) < len(LONG)
    memory = await read_thread(saver, thread)
    assert memory["messages"][-1] == {"id": reply_id, "role": "assistant", "content": streamed}
    # The turn checkpoints when it ends: a stop still saves what the user asked.
    assert (memory["messages"][-2]["role"], memory["messages"][-2]["content"]) == (
        "user",
        "tell me a story",
    )
    await run_one(online_config, saver, thread, "go on")
    sent = fake_openai.requests[-1]["messages"]
    assert {"role": "assistant", "content": streamed} in [
        {"role": m["role"], "content": m["content"]} for m in sent
    ]


async def test_cancelling_the_consumer_stores_the_partial_and_sets_finished(
    online_config, saver, fake_openai
):
    thread, reply_id = new_id(), new_id()
    fake_openai.enqueue(Reply(text=LONG, chars_per_second=400))
    turn = make_turn(online_config, saver, thread, "tell me a story", reply_id=reply_id)
    got_tokens = asyncio.Event()

    async def consume() -> None:
        async for event in turn.events():
            if event["type"] == "token":
                got_tokens.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_tokens.wait(), 5)
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
    assert turn.finished is not None and turn.finished["finish_reason"] == "stopped"
    memory = await read_thread(saver, thread)
    assert memory["messages"][-1]["id"] == reply_id
    assert memory["messages"][-1]["content"] == turn.finished["content"] != ""


async def test_stream_broken_midway_ends_with_error_and_keeps_the_text(
    online_config, saver, fake_openai
):
    thread = new_id()
    fake_openai.enqueue(Reply(text="Hello there, this will break", fail_after_chunks=3))
    result = await run_one(online_config, saver, thread, "hi")
    assert result.finished["finish_reason"] == "error"
    assert result.finished["error"]
    assert result.finished["content"] == "Hello there,"
    memory = await read_thread(saver, thread)
    assert memory["messages"][-1]["content"] == "Hello there,"


async def test_a_stream_cut_without_a_finish_reason_ends_with_error_and_says_why(
    online_config, saver, fake_openai
):
    thread = new_id()
    fake_openai.enqueue(Reply(text="Half of the answer", finish=False))
    result = await run_one(online_config, saver, thread, "hi")
    assert result.finished["finish_reason"] == "error"  # never end_turn: it can be continued
    assert result.finished["content"] == "Half of the answer"
    assert result.codes("generate")[-1] == "model.cut_off"  # shown as it ends
    assert result.events[-2]["code"] == "model.cut_off"
    assert [p["code"] for p in result.finished["parts"]][-1] == "model.cut_off"  # and kept
    memory = await read_thread(saver, thread)
    assert memory["messages"][-1]["content"] == "Half of the answer"


async def test_http_500_ends_with_error(online_config, saver, fake_openai):
    fake_openai.enqueue(Reply(status=500))
    result = await run_one(online_config, saver, new_id(), "hi")
    assert result.finished["finish_reason"] == "error"
    # The failure is named, in words for people; the server's own text is only logged.
    assert result.finished["error"] == {
        "code": "model_unavailable",
        "message": "The model server could not be reached, so there is no answer",
    }
    assert result.finished["content"] == ""
    assert result.codes("generate")[-1] == "model.unavailable"


async def test_connection_refused_ends_with_error(online_config, saver):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = replace(
        online_config, openai_base_url=f"http://127.0.0.1:{port}/v1", request_timeout=3
    )
    started = time.monotonic()
    result = await run_one(config, saver, new_id(), "hi")
    assert time.monotonic() - started < 2  # refused at once, not waited out
    assert result.finished["finish_reason"] == "error"
    assert result.finished["error"]["code"] == "model_unavailable"


async def test_length_maps_to_max_tokens(online_config, saver, fake_openai):
    fake_openai.enqueue(Reply(text="cut off", finish_reason="length"))
    result = await run_one(online_config, saver, new_id(), "hi")
    assert result.finished["finish_reason"] == "max_tokens"


async def test_next_turn_after_an_error_works(online_config, saver, fake_openai):
    thread = new_id()
    fake_openai.enqueue(Reply(status=500))
    await run_one(online_config, saver, thread, "first")
    result = await run_one(online_config, saver, thread, "second")
    assert result.finished["finish_reason"] == "end_turn"
    users = [m["content"] for m in fake_openai.requests[-1]["messages"] if m["role"] == "user"]
    assert users == ["first", "second"]
