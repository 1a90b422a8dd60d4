"""Model servers as they are (SPEC): each dialect's reasoning through the real agent, the
socket and the stored reply."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from conversations.models import Message
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply, message_texts

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
