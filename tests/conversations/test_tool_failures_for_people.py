"""A failed tool call carries two texts: the model's instruction (English, in the tool
result) and, for people, a step and a sentence in their language. A model that repeats the
instruction (small local ones do) still shows people only the sentence written for them:
in the reply as it streams, as it is stored, in the agent's memory and on the page.

The real agent against the fake OpenAI-compatible server, which here parrots tool results.
"""

from __future__ import annotations

import json
import re

import pytest
from asgiref.sync import sync_to_async

from agent.failure_replies import FAILURE_REPLIES
from conversations import services
from memories import services as memories
from tests.agent.helpers import memory_responder
from tests.support.openai_replies import Reply, ToolCall, forced_tool
from tests.support.turns import ask

pytestmark = pytest.mark.django_db(transaction=True)

DEVELOPER_TEXT = re.compile(r"Error:|tell the user|Not saved|sensitive information", re.I)
AFTER = {"en": " Anything else?", "ko": " 더 도와드릴 일이 있을까요?"}
SAID = {
    "en": "My card number is 4111 1111 1111 1111. Remember it.",
    "ko": "제 카드 번호는 4111 1111 1111 1111이에요. 기억해 줘.",
}
STEP = {
    "en": "Did not save this as a memory: it looks like a card or bank account number",
    "ko": "카드 번호나 계좌 번호로 보여 메모리에 저장하지 않았습니다",
}


def parrot(language: str):
    """Save what the user says with the remember tool, then repeat the tool's answer."""

    def respond(body: dict) -> Reply:
        last = body["messages"][-1]
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        asks = forced_tool(body) is None and last["role"] == "user" and "remember" in offered
        if asks and "4111" in str(last.get("content")):
            return Reply(tool_calls=[ToolCall("remember", {"fact": last["content"]})])
        if last["role"] == "tool":
            return Reply(text=str(last["content"]) + AFTER[language], chunk_chars=3)
        return memory_responder(body)

    return respond


@pytest.mark.parametrize("language", ["en", "ko"])
async def test_a_repeated_tool_instruction_reaches_people_as_a_sentence_for_them(
    model, alice, alice_client, language
):
    model.responder = parrot(language)
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    reply, frames = await ask(alice, conversation, content=SAID[language], confirm_sensitive=True)
    # The model was given the instruction, in English…
    [told] = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert told.startswith("Error: Not saved") and "tell the user" in told
    # …and people read the sentence written for them, in the conversation's language.
    sentence = FAILURE_REPLIES["memory.sensitive_financial"][language == "ko"]
    assert reply.content == sentence + AFTER[language]
    streamed = "".join(f["text"] for f in frames if f["type"] == "token")
    assert streamed == reply.content  # nothing of the instruction went out, even for a moment
    finished = next(f for f in frames if f["type"] == "generation.finished")
    assert finished["message"]["content"] == reply.content
    shown = [f.get("content", "") for f in frames if f["type"] == "thinking"]
    shown += [json.dumps(p, ensure_ascii=False) for p in reply.parts]
    assert not any(DEVELOPER_TEXT.search(text) for text in [reply.content, *shown])
    [refusal] = [p for p in reply.parts if p["type"] == "tool_result"]
    assert refusal["is_error"] and refusal["code"] == "memory.sensitive_financial"
    assert await sync_to_async(memories.list_memories)(user_id=alice.pk) == []

    # The page, in the reader's language (Accept-Language), shows the step in it.
    page = await sync_to_async(alice_client.get)(
        f"/conversations/{conversation.id}/", HTTP_ACCEPT_LANGUAGE=language
    )
    html = page.content.decode()
    assert STEP[language] in html and sentence in html
    assert not DEVELOPER_TEXT.search(html.replace(SAID[language], ""))

    # The agent remembers what people were shown, not the repeat.
    await ask(alice, conversation, content="Thanks.")
    remembered = [
        m["content"]
        for m in model.requests[-1]["messages"]
        if m["role"] == "assistant" and m.get("content")
    ]
    assert remembered[-1] == reply.content
