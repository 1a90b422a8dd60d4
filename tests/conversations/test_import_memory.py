"""An imported conversation is continued with memory: the first new question's request to
the model (a fake OpenAI-compatible server) holds what was said in the other app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async

from tests.support.turns import ask
from transfers import imports

from .conftest import sent_to_model

pytestmark = pytest.mark.django_db(transaction=True)
FIXTURES = Path(__file__).parent / "import_fixtures"


@sync_to_async
def import_fixture(user, name: str, index: int = 0):
    with open(FIXTURES / name, "rb") as file:
        return imports.import_file(user=user, source=file).conversations[index]


@pytest.mark.parametrize(
    ("name", "index", "fact", "not_seen"),
    [
        ("chatgpt_conversations.json", 1, "내 이름은 철수야.", None),
        # The current branch is Bori's; the edited-away Nabi branch is not memory.
        ("chatgpt_conversations.json", 0, "My dog's name is Bori", "Nabi"),
        ("claude_conversations.json", 0, "My dog's name is Bori and I live in Busan.", None),
        ("openwebui_export.json", 0, "I planted tomatoes on May 3rd.", "Tomatoes need full sun."),
        ("librechat_export.json", 0, "My favourite dish is kimchi jjigae.", "Use well-fermented"),
    ],
)
async def test_the_first_new_question_remembers_the_imported_branch(
    model, alice, name, index, fact, not_seen
):
    conversation = await import_fixture(alice, name, index)
    reply, _ = await ask(alice, conversation, content="What did I tell you before?")
    assert reply.finish_reason == "end_turn"
    seen = sent_to_model(model)
    assert fact in seen
    if not_seen:
        assert not_seen not in seen
    # And the turn after it still holds it, from the agent's own checkpoint now.
    await ask(alice, conversation, content="And again?")
    assert fact in sent_to_model(model)


async def test_this_apps_json_import_is_remembered_too(model, alice):
    export = {
        "format": "chatsite.conversation",
        "version": 1,
        "conversation": {"title": "Old"},
        "messages": [
            {"sequence_number": 1, "role": "user", "content": "내 이름은 영희야."},
            {"sequence_number": 2, "role": "assistant", "content": "안녕하세요, 영희 님."},
        ],
    }
    conversation = await sync_to_async(imports.import_conversation)(
        user=alice, raw=json.dumps(export)
    )
    await ask(alice, conversation, content="내 이름이 뭐라고 했지?")
    assert "내 이름은 영희야." in sent_to_model(model)
