"""A long conversation on a model with a small window (SPEC "Model servers as they are").

SmolLM2 on llama-cpp-python's server started with `--n_ctx 2048`, as people run a small
local model. That server tells its window nowhere (`/v1/models` has no length) and answers
a streamed prompt past it with an empty stream; asked again unstreamed, it says
"maximum context length is 2048 tokens". A conversation of 24 imported messages (about
6,000 tokens) must go on: every turn answers, and once the window is known no request goes
past it. Request sizes are counted with the model's own tokenizer.
"""

from __future__ import annotations

import json

import pytest
from django.test import AsyncClient

from conversations.models import Message
from tests.realtime.conftest import make_token, open_socket, receive_until

from .conftest import model_file, serve_real_model

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flush_redis")]


WINDOW = 2048
TURN_SECONDS = 240
FACTS = [
    "The lighthouse on Gull Rock was built in 1887 by a crew of eleven masons.",
    "Its lamp burned whale oil until 1911, then kerosene, then electricity from 1952.",
    "The last keeper, Ada Mertens, kept a logbook of every ship that passed for 31 years.",
]


@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    with serve_real_model(tmp_path_factory.mktemp("llama-2k"), n_ctx=WINDOW) as model:
        yield model


@pytest.fixture
def on_small_model(settings, small_model):
    settings.OPENAI_API_KEY = "local"
    settings.OPENAI_BASE_URL = small_model.base_url
    settings.CHAT_MODEL = small_model.model_id
    settings.CHAT_MODELS = "auto"
    settings.CHAT_MODEL_CONTEXT = ""
    settings.CHAT_CONTEXT_WINDOW = 128_000  # what the app assumes when nobody says
    small_model.recorder.requests.clear()
    return small_model


def history() -> list[dict]:
    """24 messages (about 10,000 tokens): the five newest alone are past the model's window,
    so the first request is refused whatever the memory rules keep."""
    messages = []
    for n in range(12):
        question = f"Question {n + 1}: tell me everything about the lighthouse. " + " ".join(FACTS)
        answer = f"Answer {n + 1}: " + " ".join(FACTS * 10) + f" That is note {n + 1}."
        messages += [
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer},
        ]
    return [{"sequence_number": i, "parts": [], **m} for i, m in enumerate(messages, 1)]


def tokenizer():
    from llama_cpp import Llama

    model = Llama(model_path=str(model_file()), vocab_only=True, verbose=False)
    return lambda text: len(model.tokenize(text.encode(), add_bos=False, special=True))


def request_tokens(count, body: dict) -> int:
    """Count a chat request's prompt roughly as the server does (messages' text and roles)."""
    text = ""
    for message in body.get("messages", []):
        content = message.get("content")
        content = content if isinstance(content, str) else json.dumps(content)
        text += f"<|im_start|>{message.get('role')}\n{content}<|im_end|>\n"
    return count(text + json.dumps(body.get("tools") or ""))


@pytest.mark.timeout(600)  # three turns of a CPU model reading 2,000-token prompts
async def test_a_long_imported_conversation_goes_on_within_a_2048_token_window(
    on_small_model, alice
):
    token = await make_token(alice)
    client = AsyncClient()
    export = {
        "format": "chatsite.conversation",
        "version": 1,
        "conversation": {"title": "Gull Rock"},
        "messages": history(),
    }
    imported = await client.post(
        "/api/v1/conversations/import",
        json.dumps(export),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert imported.status_code == 201, imported.content
    conversation_id = imported.json()["id"]
    comm = open_socket(conversation_id, token=token)
    assert (await comm.connect())[0]
    finished = []
    codes: list[str] = []
    for question in ("Who was the last keeper?", "When was it built?", "What did the lamp burn?"):
        await comm.send_json_to({"type": "message.send", "content": question})
        frames = await receive_until(comm, "generation.finished", wait=TURN_SECONDS)
        finished.append(frames[-1])
        codes += [f["code"] for f in frames if f["type"] == "thinking"]
    await comm.disconnect()
    assert [f["finish_reason"] for f in finished] == ["end_turn"] * 3, codes
    assert all(f["message"]["content"].strip() for f in finished)
    count = tokenizer()
    sizes = [request_tokens(count, body) for body in on_small_model.recorder.chat_requests()]
    # Past the window at most in the first turn (before the server said how big it is).
    first_fits = next((i for i, size in enumerate(sizes) if size < WINDOW), None)
    later = sizes[(first_fits or 0) :]
    refused = [size for size in later if size >= WINDOW]
    assert not refused, (sizes, codes)
    assert max(sizes) >= WINDOW  # the mechanism ran: a refusal taught the window
    # The mechanism ran: the conversation did not fit as it was and was folded to fit.
    assert sum(count(m["content"]) for m in history()) > WINDOW
    last = await Message.objects.aget(pk=finished[-1]["message"]["id"])
    assert last.metadata["context"]["window"] == WINDOW
    assert {"memory.summarized", "memory.kept_words_refused", "memory.kept_words_failed",
            "memory.compressed", "model.window"} & set(codes)  # fmt: skip
