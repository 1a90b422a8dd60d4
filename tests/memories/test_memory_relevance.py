"""Only memories relevant to the turn reach the model, and "Memories used" shows exactly
those: 30 personal facts stored, a question about one, a question about none (the real
agent, the bundled embedding model, the fake OpenAI-compatible server)."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from conversations import services
from memories import services as memories
from tests.conversations.conftest import model  # noqa: F401  (the fixture)
from tests.support.openai_replies import forced_tool
from tests.support.turns import ask

pytestmark = pytest.mark.django_db(transaction=True)

FACTS = [
    "My dog's name is Bori.", "My name is Chulsoo.", "I live in Busan.", "I am vegetarian.",
    "My locker number is 4412.", "내 생일은 3월 14일이야.", "I work as a nurse at a hospital.",
    "My wife's name is Younghee.", "I am allergic to peanuts.", "My favourite colour is teal.",
    "I drive a blue Hyundai Avante.", "내 딸은 초등학교 2학년이야.", "I play tennis on Saturdays.",
    "My card ends in 4821.", "I prefer answers in Korean.", "나는 커피를 하루에 두 잔 마셔.",
    "My phone is a Galaxy S24.", "I am learning Spanish.", "우리 집 고양이 이름은 나비야.",
    "My manager is Ms. Park.", "I take the 7:40 KTX to Daejeon on Mondays.",
    "I have a dentist appointment on Dec 3.", "My blood type is A.",
    "I run a small bakery called Dalbit.", "I'm saving for a trip to Iceland.", "내 키는 178cm야.",
    "My laptop is a ThinkPad X1.", "I don't eat spicy food.", "My son plays the violin.",
    "I graduated from KAIST in 2015.",
]  # fmt: skip


@sync_to_async
def remember_all(user) -> dict[str, str]:
    return {memories.add_memory(user_id=user.pk, text=f)["id"]: f for f in FACTS}


def sent_memories(server, saved: dict[str, str]) -> list[str]:
    main = [b for b in server.requests if forced_tool(b) is None and b.get("messages")]
    system = json.dumps(
        [m for m in main[-1]["messages"] if m["role"] == "system"], ensure_ascii=False
    )
    return [fact for fact in saved.values() if fact in system]


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        ("What is my dog called?", "My dog's name is Bori."),
        ("우리 딸 몇 학년이지?", "내 딸은 초등학교 2학년이야."),
        ("When do I see the dentist?", "I have a dentist appointment on Dec 3."),
        ("What's my locker number?", "My locker number is 4412."),
    ],
)
async def test_a_question_about_one_memory_sends_it_and_few_others(
    model,  # noqa: F811
    alice,
    question,
    wanted,
):
    saved = await remember_all(alice)
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    reply, _ = await ask(alice, conversation, content=question)
    sent = sent_memories(model, saved)
    assert wanted in sent and len(sent) <= 5, sent
    # "Memories used" is exactly what was sent.
    assert sorted(m["text"] for m in reply.metadata["context"]["memories"]) == sorted(sent)


@pytest.mark.parametrize(
    "question",
    ["Write a haiku about autumn rain.", "How do I reverse a list in Python?", "광합성이 뭐야?"],
)
async def test_an_unrelated_question_sends_no_personal_memory(
    model,  # noqa: F811
    alice,
    question,
):
    saved = await remember_all(alice)
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    reply, _ = await ask(alice, conversation, content=question)
    assert sent_memories(model, saved) == []
    assert reply.metadata["context"]["memories"] == []


@pytest.mark.parametrize(
    "question", ["What do you remember about me?", "나에 대해 뭘 기억하고 있어?"]
)
async def test_asking_what_is_remembered_sends_the_newest_memories(
    model,  # noqa: F811
    alice,
    question,
):
    saved = await remember_all(alice)
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    reply, _ = await ask(alice, conversation, content=question)
    assert len(sent_memories(model, saved)) == 5
    assert len(reply.metadata["context"]["memories"]) == 5
