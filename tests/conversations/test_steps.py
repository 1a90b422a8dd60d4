"""A reply's steps as people read them: in their language, in words, never an error text.

Real turns of the built-in offline model through the reply orchestrator, on the database;
the stored parts are rendered with the template filter the pages use.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings as django_settings
from django.db import connections
from django.template import Context, Template
from django.utils import translation

from agent.checkpoint import close_checkpointers
from agent.steps import STEPS, describe
from conversations import services
from conversations.realtime.hub import aclose_hub
from conversations.steps import JS_CATALOG, javascript_catalog, step_details, step_text
from memories import services as memories
from tests.support.turns import ask

pytestmark = pytest.mark.django_db(transaction=True)

STEP_KINDS = ("thinking", "tool_call", "tool_result")
DEVELOPER_TEXT = re.compile(r"\(s\)|\(ies\)|\w+(Error|Exception)\b|Error:|Tell the user|→")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
new_conversation = sync_to_async(services.create_conversation)
list_memories = sync_to_async(memories.list_memories)


@pytest.fixture
async def offline(settings):
    """The built-in offline model answers (no API key), at full speed."""
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    settings.OFFLINE_MODEL_CHARS_PER_SECOND = 0
    yield
    await aclose_hub()
    await close_checkpointers()
    await sync_to_async(connections.close_all)()


def render(part: dict) -> str:
    """Render a part the way a page does: `{{ part|step_text }}`."""
    return Template("{% load chat %}{{ part|step_text }}").render(Context({"part": part}))


def steps_of(*replies) -> list[dict]:
    return [p for reply in replies for p in reply.parts if p.get("type") in STEP_KINDS]


async def test_a_korean_conversation_shows_its_steps_in_korean(offline, alice):
    conversation = await new_conversation(user=alice)
    first, _ = await ask(alice, conversation, content="123 * 456 계산해줘")
    second, _ = await ask(alice, conversation, content="제 이름은 민지예요")
    third, _ = await ask(alice, conversation, content="제 이름이 뭐였죠?")
    parts = steps_of(first, second, third)
    codes = {p["code"] for p in parts}
    assert {"tool.calculator.call", "tool.calculator.done", "memory.fresh"} <= codes
    assert {"tool.remember.done", "memory.in_view", "memory.memories_used"} <= codes
    with translation.override("ko"):
        korean = [render(p) for p in parts]
    for part, text in zip(parts, korean, strict=True):
        assert text and not LATIN_WORD.search(text), (part["code"], text)
    with translation.override("en"):
        assert [render(p) for p in parts] == [p["content"] for p in parts]
    assert "56088" in first.content


async def test_thinking_frames_carry_a_code_params_and_words_for_people(offline, alice):
    conversation = await new_conversation(user=alice)
    await ask(alice, conversation, content="Hello there")
    reply, frames = await ask(alice, conversation, content="What is 12 * 7?")
    thinking = [f for f in frames if f["type"] == "thinking"]
    assert {"route", "memory", "generate", "tool_call", "tool_result"} <= {
        f["step"] for f in thinking
    }
    for frame in thinking:
        assert STEPS[frame["code"]].kind == frame["step"]
        assert isinstance(frame["params"], dict)
        assert frame["content"] == describe(frame["code"], frame["params"])
        assert not DEVELOPER_TEXT.search(frame["content"]), frame["content"]
    memory = next(f for f in thinking if f["step"] == "memory")
    assert memory["content"] == "Looked at 2 earlier messages"
    # What the sockets were shown is what the reply keeps.
    stored = {(p["code"], p["content"]) for p in steps_of(reply)}
    assert stored == {(f["code"], f["content"]) for f in thinking}


@pytest.mark.parametrize(
    ("language", "said", "expected"),
    [
        (
            "ko",
            "제 카드 번호는 4111 1111 1111 1111이에요. 기억해 줘.",
            "카드 번호나 계좌 번호처럼 보여서 메모리에 저장하지 않았어요.",
        ),
        (
            "en",
            "My card number is 4111 1111 1111 1111.",
            "I couldn't save that as a memory because it looks like a card or bank account",
        ),
    ],
)
async def test_a_refused_memory_is_explained_to_the_person(
    offline, alice, language, said, expected
):
    conversation = await new_conversation(user=alice)
    reply, frames = await ask(alice, conversation, content=said, confirm_sensitive=True)
    assert reply.finish_reason == "end_turn"
    assert expected in reply.content
    assert not DEVELOPER_TEXT.search(reply.content) and "remember" not in reply.content
    [refusal] = [p for p in reply.parts if p["type"] == "tool_result"]
    assert refusal["is_error"] and refusal["code"] == "memory.sensitive_financial"
    assert step_details(refusal) == []  # the error text the model read is not shown
    shown = [f["content"] for f in frames if f["type"] == "thinking"] + [
        p.get("content", "") for p in reply.parts
    ]
    assert not any(DEVELOPER_TEXT.search(text) for text in shown)
    with translation.override(language):
        text = render(refusal)
    assert (
        text
        == {
            "ko": "카드 번호나 계좌 번호로 보여 메모리에 저장하지 않았습니다",
            "en": "Did not save this as a memory: it looks like a card or bank account number",
        }[language]
    )
    assert await list_memories(user_id=alice.pk) == []


def test_steps_stored_before_codes_keep_their_words_and_tools_get_theirs():
    old_thinking = {"type": "thinking", "step": "memory", "content": "memory 4 message(s)"}
    old_call = {"type": "tool_call", "name": "calculator", "args": {"expression": "2+2"}}
    old_result = {"type": "tool_result", "name": "calculator", "content": "4"}
    old_failure = {
        "type": "tool_result",
        "name": "remember",
        "content": "Error: x",
        "is_error": True,
    }
    imported = {"type": "tool_call", "name": "weather", "args": {"city": "Seoul"}}
    with translation.override("ko"):
        assert step_text(old_thinking) == "memory 4 message(s)"
        assert step_text(old_call) == "계산기 사용 중"
        assert step_details(old_call) == [{"label": "입력", "value": '{"expression": "2+2"}'}]
        assert step_text(old_result) == "계산기를 사용했습니다"
        assert step_details(old_result) == [{"label": "결과", "value": "4"}]
        assert step_text(old_failure) == "메모리에 저장하지 못했습니다"
        assert step_details(old_failure) == []
        assert step_text(imported) == "weather 도구 사용 중"


def test_every_step_has_korean():
    korean: dict[str, str] = {}  # every file of locale/ko_more, as locale/fill_ko.py merges them
    for path in sorted((Path(django_settings.BASE_DIR) / "locale" / "ko_more").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"ko_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        korean.update(module.KO)
    missing = [s.text for s in STEPS.values() if not korean.get(s.text)]
    assert missing == []


def test_the_javascript_step_catalog_is_generated_from_the_one_definition():
    path = Path(django_settings.BASE_DIR) / JS_CATALOG
    assert path.read_text(encoding="utf-8") == javascript_catalog()  # manage.py step_catalog
