"""Model servers as they are (SPEC): each dialect's reasoning through the real agent, the
socket and the stored reply."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from conversations.models import Conversation, Message
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, count_tokens, message_texts

from .conftest import make_conversation, make_token, open_socket, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flush_redis")]

REASONING = "The user asks for six times seven. Six sevens are forty-two. 육 곱하기 칠."
ANSWER = "It is 42."
# Every way a server sends a model's reasoning: `reasoning_content` (llama.cpp, DeepSeek,
# vLLM before 0.11), `reasoning` (vLLM since 0.11, Ollama, OpenRouter with its details
# beside), and inline <think> tags (a model served without a reasoning parser).
DIALECTS = ["llamacpp", "deepseek", "vllm-0.10", "vllm", "ollama", "openrouter", "think"]


def use(settings, server: FakeOpenAI) -> None:
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = server.base_url
    settings.CHAT_MODEL = "fake-model"
    settings.CHAT_MODELS = ""


def stitched(frames: list[dict[str, Any]], kind: str) -> str:
    """Join frames of `kind` by their index, asserting none is missing or repeated."""
    text = ""
    for frame in frames:
        if frame["type"] == kind:
            assert frame["index"] == len(text), (kind, frame["index"], len(text))
            text += frame["text"]
    return text


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_reasoning_streams_apart_from_the_answer_is_kept_and_never_sent_back(
    settings, alice, dialect
):
    with FakeOpenAI(dialect=dialect) as server:
        use(settings, server)
        # Three characters a chunk: every tag is split across chunks.
        server.enqueue(Reply(text=ANSWER, reasoning=REASONING, chunk_chars=3))
        token, conversation = await make_token(alice), await make_conversation(alice)
        comm = open_socket(conversation.id, token=token)
        assert (await comm.connect())[0]
        await comm.send_json_to({"type": "message.send", "content": "What is 6 * 7?"})
        frames = await receive_until(comm, "generation.finished", wait=30)
        await comm.send_json_to({"type": "message.send", "content": "And 6 * 8?"})
        await receive_until(comm, "generation.finished", wait=30)
        await comm.disconnect()
    assert stitched(frames, "reasoning") == REASONING
    assert stitched(frames, "token") == ANSWER
    kinds = [f["type"] for f in frames]
    assert kinds.index("reasoning") < kinds.index("token")  # live, before the answer
    finished = frames[-1]["message"]
    assert finished["content"] == ANSWER
    stored = await Message.objects.aget(pk=finished["id"])
    assert stored.content == ANSWER
    thought = [p for p in stored.parts if p.get("step") == "reasoning"]
    assert len(thought) == 1 and thought[0]["type"] == "thinking"
    assert thought[0]["content"] == REASONING and thought[0]["seconds"] >= 1
    # The next turn's request holds the answer, never the thinking.
    history = " ".join(message_texts(server.requests[-1]))
    assert ANSWER in history and "forty-two" not in history and "<think>" not in history
    assert all("forty-two" not in " ".join(message_texts(r)) for r in server.title_requests)


async def test_a_socket_that_joins_while_the_model_thinks_gets_the_reasoning_so_far(
    settings, alice
):
    slow = Reply(text=ANSWER, reasoning=REASONING * 12, chunk_chars=8, chars_per_second=400)
    with FakeOpenAI(dialect="llamacpp") as server:
        use(settings, server)
        server.enqueue(slow)
        token, conversation = await make_token(alice), await make_conversation(alice)
        first = open_socket(conversation.id, token=token)
        assert (await first.connect())[0]
        await first.send_json_to({"type": "message.send", "content": "Think slowly"})
        await receive_until(first, "reasoning", wait=30)
        await asyncio.sleep(0.2)
        late = open_socket(conversation.id, token=token)
        assert (await late.connect())[0]
        await late.send_json_to({"type": "sync", "after": 0})
        state = await receive_until(late, "sync.state", wait=10)
        generation = state[-1]["generation"]
        assert generation is not None and generation["text"] == ""
        so_far = generation["reasoning"]
        assert so_far and (REASONING * 12).startswith(so_far)
        rest = await receive_until(late, "generation.finished", wait=30)
        await receive_until(first, "generation.finished", wait=30)
        await first.disconnect()
        await late.disconnect()
    # The snapshot and the frames around it (some may arrive before it) join up exactly,
    # as the page stitches them (static/js/socket.js).
    pieces = {f["index"]: f["text"] for f in [*state, *rest] if f["type"] == "reasoning"}
    text, progressed = so_far, True
    while progressed:
        progressed = False
        for index, piece in list(pieces.items()):
            if index <= len(text):
                del pieces[index]
                if index + len(piece) > len(text):
                    assert text[index:] == piece[: len(text) - index]
                    text = text[:index] + piece
                progressed = True
    assert text == REASONING * 12 and not pieces


async def ask(conversation_id: Any, token: str, content: str) -> list[dict[str, Any]]:
    """Send one message over a socket; return every frame up to the stored reply."""
    comm = open_socket(conversation_id, token=token)
    assert (await comm.connect())[0]
    await comm.send_json_to({"type": "message.send", "content": content})
    frames = await receive_until(comm, "generation.finished", wait=60)
    await comm.disconnect()
    return frames


def steps(frames: list[dict[str, Any]]) -> list[str]:
    return [f["code"] for f in frames if f["type"] == "thinking"]


async def test_a_refused_temperature_is_left_out_and_remembered(settings, alice):
    refusal = {
        "error": {
            "message": "Unsupported value: 'temperature' does not support 0.7 with this model."
            " Only the default (1) value is supported.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_value",
        }
    }

    def reasoning_model(body: dict[str, Any]) -> Reply:
        if "temperature" in body:
            return Reply(status=400, error_body=refusal)
        return Reply(text="Done.")

    with FakeOpenAI(reasoning_model) as server:
        use(settings, server)
        token, conversation = await make_token(alice), await make_conversation(alice)
        await Conversation.objects.filter(pk=conversation.pk).aupdate(temperature=0.7)
        first = await ask(conversation.id, token, "Hello")
        second = await ask(conversation.id, token, "Again")
        requests = list(server.requests)
    assert first[-1]["finish_reason"] == "end_turn" == second[-1]["finish_reason"]
    assert first[-1]["message"]["content"] == "Done."
    with_temperature = [r for r in requests if "temperature" in r]
    assert len(with_temperature) == 1  # refused once; the next turn never sends it
    assert requests[0]["temperature"] == 0.7


def refusal(message: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"message": message, **fields}}


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (401, refusal("Incorrect API key provided: sk-x***", code="invalid_api_key"), "model_auth"),
        (404, refusal("The model `x` does not exist", code="model_not_found"), "model_not_found"),
        (400, refusal("Invalid 'messages[1].name'", param="messages"), "model_rejected"),
        (503, refusal("Loading model", type="unavailable_error", code=503), "model_unavailable"),
    ],
)
async def test_a_failed_reply_names_its_failure_and_never_shows_the_servers_words(
    settings, alice, status, body, code
):
    with FakeOpenAI(lambda request: Reply(status=status, error_body=body)) as server:
        use(settings, server)
        token, conversation = await make_token(alice), await make_conversation(alice)
        frames = await ask(conversation.id, token, "Hello")
    assert frames[-1]["finish_reason"] == "error"
    stored = await Message.objects.aget(pk=frames[-1]["message"]["id"])
    assert stored.metadata["error"]["code"] == code
    said = stored.metadata["error"]["message"]
    assert said and body["error"]["message"] not in said and "Error code" not in said
    assert f"model.{code.removeprefix('model_')}" in steps(frames)
    assert "model.cut_off" not in steps(frames)  # a refusal is never a cut stream


async def test_a_busy_server_is_waited_out_as_it_asks_and_the_page_says_so(settings, alice):
    busy = Reply(
        status=429,
        error_body={"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
        headers={"Retry-After": "1"},
    )
    with FakeOpenAI() as server:
        use(settings, server)
        server.enqueue(busy, busy, "Now I can answer.")
        token, conversation = await make_token(alice), await make_conversation(alice)
        started = time.monotonic()
        frames = await ask(conversation.id, token, "Hello")
        elapsed = time.monotonic() - started
    assert frames[-1]["finish_reason"] == "end_turn"
    assert frames[-1]["message"]["content"] == "Now I can answer."
    assert steps(frames).count("model.busy") == 2
    assert elapsed >= 2.0  # it waited as asked, twice


async def test_a_server_busy_past_three_tries_fails_as_rate_limited(settings, alice):
    busy = Reply(status=429, headers={"Retry-After": "0"})
    with FakeOpenAI(lambda body: busy) as server:
        use(settings, server)
        token, conversation = await make_token(alice), await make_conversation(alice)
        frames = await ask(conversation.id, token, "Hello")
        tries = len(server.requests)
    assert frames[-1]["finish_reason"] == "error"
    stored = await Message.objects.aget(pk=frames[-1]["message"]["id"])
    assert stored.metadata["error"]["code"] == "model_rate_limited"
    assert tries == 4  # the first, then three more


async def test_a_slow_server_is_waited_for_and_the_page_counts_the_seconds(
    settings, alice, monkeypatch
):
    monkeypatch.setattr("agent.openai_stream.WAITING_STEP_SECONDS", 0.5)
    with FakeOpenAI() as server:
        use(settings, server)
        settings.CHAT_MODEL_FIRST_BYTE_TIMEOUT = 300
        server.enqueue(Reply(text="Read it.", delay=1.8))  # reading a long prompt on a CPU
        token, conversation = await make_token(alice), await make_conversation(alice)
        frames = await ask(conversation.id, token, "A long prompt")
    assert frames[-1]["finish_reason"] == "end_turn"
    waiting = [f for f in frames if f["type"] == "thinking" and f["code"] == "model.waiting"]
    assert len(waiting) >= 2
    seconds = [int(f["params"]["seconds"]) for f in waiting]
    assert seconds == sorted(seconds) and seconds[-1] >= 1


async def test_a_tool_refusal_is_told_apart_from_any_other_400(settings, alice):
    from agent.capabilities import supports_tools
    from conversations.replies.turns import build_agent_config

    other = {"error": {"message": "Invalid value for 'top_k'", "param": "top_k"}}
    with FakeOpenAI(lambda body: Reply(status=400, error_body=other)) as server:
        use(settings, server)
        token, conversation = await make_token(alice), await make_conversation(alice)
        frames = await ask(conversation.id, token, "what is 12*7?")
        assert frames[-1]["finish_reason"] == "error"
        assert supports_tools(build_agent_config())  # not marked "takes no tools"


TURNS = 10


def long_message(n: int) -> str:
    """About 90 tokens of English, numbered so each turn's words are its own."""
    return f"Turn {n}: " + " ".join(f"word{n}x{i} and more text here" for i in range(18))


@pytest.mark.parametrize(
    ("dialect", "asked"),
    [("llamacpp", "GET /props"), ("vllm", "GET /v1/models"), ("ollama", "POST /api/show")],
)
async def test_a_window_the_server_tells_is_learned_and_no_request_goes_past_it(
    settings, alice, dialect, asked
):
    window = 1500
    server = FakeOpenAI(
        dialect=dialect,
        context_window=None if dialect == "ollama" else window,
        num_ctx=window if dialect == "ollama" else None,
    )
    with server:
        use(settings, server)
        token, conversation = await make_token(alice), await make_conversation(alice)
        codes: list[str] = []
        for n in range(1, TURNS + 1):
            frames = await ask(conversation.id, token, long_message(n))
            assert frames[-1]["finish_reason"] == "end_turn", steps(frames)
            codes += steps(frames)
    assert asked in server.info_requests
    # Never past the window: not refused (llama.cpp, vLLM), not cut silently (Ollama).
    assert server.refused_too_long == 0 and server.cut_silently == 0
    assert max(server.prompt_tokens) < window
    # The mechanism ran: the conversation (each reply echoes its question) did not fit as
    # it was, and was folded into summaries to fit.
    assert 2 * sum(count_tokens(long_message(n)) for n in range(1, TURNS + 1)) > window
    assert "memory.summarized" in codes
    last = await Message.objects.aget(pk=frames[-1]["message"]["id"])
    assert last.metadata["context"]["window"] == window


@pytest.mark.parametrize("answer", [b'{"status": "ok"}', b"[]", b'{"model_info": {}}'])
async def test_a_server_that_answers_the_window_questions_with_other_json_still_replies(
    settings, alice, monkeypatch, answer
):
    """Learning the window is optional: an answer of another shape means "not told"."""
    from tests.support.dialects import Dialect

    monkeypatch.setattr(Dialect, "props", lambda self, model, window: (200, answer))
    monkeypatch.setattr(Dialect, "show", lambda self, model, window, num_ctx: (200, answer))
    with FakeOpenAI(dialect="llamacpp") as server:
        use(settings, server)
        token, conversation = await make_token(alice), await make_conversation(alice)
        frames = await ask(conversation.id, token, "Hello there")
    # The questions were asked and answered (200, another shape).
    assert {"GET /props", "POST /api/show"} <= set(server.info_requests)
    assert frames[-1]["finish_reason"] == "end_turn", steps(frames)
    assert frames[-1]["message"]["content"]


@pytest.mark.parametrize("dialect", ["llama-cpp-python", "llamacpp-no-props", "vllm-0.10"])
async def test_a_prompt_refused_as_too_long_is_fitted_sent_again_and_the_window_kept(
    settings, alice, dialect, monkeypatch
):
    if dialect == "llamacpp-no-props":  # an older llama.cpp: refusals, but no /props
        dialect = "llamacpp"
        monkeypatch.setattr("agent.windows._llamacpp_props", _says_nothing)
        monkeypatch.setattr("agent.windows._model_listing", _says_nothing)
    if dialect == "vllm-0.10":
        monkeypatch.setattr("agent.windows._model_listing", _says_nothing)
    window = 1500
    with FakeOpenAI(dialect=dialect, context_window=window) as server:
        use(settings, server)
        token, conversation = await make_token(alice), await make_conversation(alice)
        codes: list[str] = []
        refusals = []
        for n in range(1, TURNS + 1):
            frames = await ask(conversation.id, token, long_message(n))
            assert frames[-1]["finish_reason"] == "end_turn", steps(frames)
            codes += steps(frames)
            refusals.append(server.refused_too_long)
        after = server.prompt_tokens[-6:]
    # Refused in one turn only (llama-cpp-python twice in it: its empty stream, then the
    # same request unstreamed, which says the window): from then on the window was known.
    before = [0, *refusals[:-1]]
    turns_refused = [n for n, (a, b) in enumerate(zip(before, refusals, strict=True)) if b > a]
    assert len(turns_refused) == 1 and refusals[-1] <= 2
    assert "model.window" in codes  # the person was told the conversation was shortened
    assert max(after) < window


async def _says_nothing(*args: Any) -> None:
    return None


async def test_a_title_and_a_summary_are_read_without_their_think_block(settings, alice):
    def thinking_titles(body: dict[str, Any]) -> Reply:
        return Reply(text="<think>\nThe user greets me. A short title.\n</think>\n\nGreetings")

    with FakeOpenAI(dialect="think") as server:
        use(settings, server)
        server.title_responder = thinking_titles
        server.enqueue(Reply(text="Hello there!", reasoning="They said hello."))
        token, conversation = await make_token(alice), await make_conversation(alice)
        await Conversation.objects.filter(pk=conversation.pk).aupdate(
            title_source=Conversation.TitleSource.FIRST_WORDS
        )
        await ask(conversation.id, token, "Hello, my friend, how are you today?")
        for _ in range(50):
            await conversation.arefresh_from_db()
            if conversation.title == "Greetings":
                break
            await asyncio.sleep(0.1)
        titles = list(server.title_requests)
    assert conversation.title == "Greetings"
    assert titles and all(r.get("max_tokens") == 30 for r in titles)  # bounded
    assert all("They said hello" not in " ".join(message_texts(r)) for r in titles)


async def test_a_failure_reads_in_the_readers_language_through_the_api(settings, alice):
    from django.test import AsyncClient

    body = refusal("Incorrect API key provided: sk-x***", code="invalid_api_key")
    with FakeOpenAI(lambda request: Reply(status=401, error_body=body)) as server:
        use(settings, server)
        token, conversation = await make_token(alice), await make_conversation(alice)
        frames = await ask(conversation.id, token, "Hello")
    client = AsyncClient()
    answer = await client.get(
        f"/api/v1/conversations/{conversation.id}/messages",
        headers={"Authorization": f"Bearer {token}", "Accept-Language": "ko"},
    )
    reply = next(m for m in answer.json()["items"] if m["id"] == frames[-1]["message"]["id"])
    assert reply["metadata"]["error"] == {
        "code": "model_auth",
        "message": "모델 서버가 앱의 키를 받아들이지 않아 답변이 없습니다",
    }


async def test_stop_works_at_once_while_the_model_reads_the_prompt(settings, alice, monkeypatch):
    monkeypatch.setattr("agent.openai_stream.WAITING_STEP_SECONDS", 0.3)
    with FakeOpenAI() as server:
        use(settings, server)
        settings.CHAT_MODEL_FIRST_BYTE_TIMEOUT = 300
        server.enqueue(Reply(hang=True))  # a CPU server still reading a long prompt
        token, conversation = await make_token(alice), await make_conversation(alice)
        comm = open_socket(conversation.id, token=token)
        assert (await comm.connect())[0]
        await comm.send_json_to({"type": "message.send", "content": "A long prompt"})
        frames = []
        while not any(f.get("code") == "model.waiting" for f in frames):
            frames += await receive_until(comm, "thinking", wait=10)
        started = time.monotonic()
        await comm.send_json_to({"type": "generation.stop"})
        frames += await receive_until(comm, "generation.finished", wait=10)
        took = time.monotonic() - started
        await comm.disconnect()
        for _ in range(50):  # the server sees the request go away
            if server.disconnects:
                break
            await asyncio.sleep(0.1)
    assert frames[-1]["finish_reason"] == "stopped" and took < 3
    assert server.disconnects == 1
