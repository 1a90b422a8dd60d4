"""Imported conversations go on as they were held: a reply the other app cut short is
continued, and the model is sent the imported history as words only — no reasoning, no
tool markup, no citation markers — under the settings the conversation came with. The
real agent against a fake OpenAI-compatible server; what it was sent is the proof."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async

from agent.prompts import CONTINUE_NOTE
from conversations.models import Message
from tests.agent.helpers import is_summarizer_request, memory_responder
from tests.support.openai_replies import Reply, forced_tool, message_texts
from tests.support.turns import ask
from transfers import imports

pytestmark = pytest.mark.django_db(transaction=True)
FIXTURES = Path(__file__).parent / "import_fixtures"
GONE_ON = " …and that is the rest of it."


@sync_to_async
def import_fixture(user, name: str, index: int = 0):
    with open(FIXTURES / name, "rb") as file:
        return imports.import_file(user=user, source=file).conversations[index]


def go_on(body: dict) -> Reply:
    if forced_tool(body) or is_summarizer_request(body):
        return memory_responder(body)
    if any(CONTINUE_NOTE[:30] in text for text in message_texts(body)):
        return Reply(text=GONE_ON)
    return Reply(text="Noted.")


def answering_requests(model) -> list[dict]:
    return [b for b in model.requests if not forced_tool(b) and not is_summarizer_request(b)]


@pytest.mark.parametrize(
    ("name", "index", "cut_id", "said_before", "never_sent"),
    [
        (
            "chatgpt_browsing.json",
            0,
            "a3",
            "Busan has about 3.3 million people",
            ["search(", "Looking for current figures", "mclick", "【", "\ue200"],
        ),
        (
            "openwebui_reasoning.json",
            0,
            "d4",
            "water your tomatoes every morning",
            ["A plan by month", "Hot weather means", "<details", "Busan: 31°C", "&gt;"],
        ),
        (
            "librechat_tree_options.json",
            0,
            "lc-a3b",
            "You have aged kimchi",
            ["They want a stew", "2 kg aged kimchi", "pantry_lookup", "bite-size pieces"],
        ),
    ],
)
async def test_a_cut_reply_of_another_app_continues_from_its_words(
    model, alice, name, index, cut_id, said_before, never_sent
):
    model.responder = go_on
    conversation = await import_fixture(alice, name, index)
    cut = await Message.objects.aget(conversation=conversation, metadata__import__id=cut_id)
    assert cut.finish_reason == "interrupted"
    whole, _ = await ask(alice, conversation, kind="continue", message_id=cut.pk)
    assert whole.content == cut.content + GONE_ON
    assert whole.finish_reason == "end_turn"
    (request,) = answering_requests(model)
    # The cut words are the model's own last words; the history before them is there.
    assert request["messages"][-2] == {"role": "assistant", "content": cut.content}
    sent = json.dumps(request["messages"], ensure_ascii=False)
    assert said_before in sent
    for mark in never_sent:  # reasoning, tool calls and results, markup, other branches
        assert mark not in sent, mark


async def test_a_continuation_runs_under_the_imported_instructions_and_temperature(
    model, alice, settings
):
    settings.CHAT_MODELS = f"{settings.CHAT_MODEL},gpt-4o"
    model.responder = go_on
    conversation = await import_fixture(alice, "librechat_tree_options.json")
    assert (conversation.model, conversation.temperature) == ("gpt-4o", 0.3)
    await ask(alice, conversation, content="How long should it simmer?")
    (request,) = answering_requests(model)
    assert request["model"] == "gpt-4o"
    assert request["temperature"] == 0.3
    system = request["messages"][0]
    assert system["role"] == "system"
    assert "You are a terse Korean cooking teacher." in system["content"]
