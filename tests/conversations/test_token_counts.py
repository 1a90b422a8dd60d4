"""Token counts add up: a message records what the model used for it (the whole text of a
continued reply, never the fragment), an estimate says so, and a conversation's totals are
the sums of its messages. The real agent against the fake OpenAI-compatible server, which
reports usage counted with `count_tokens`."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.db.models import Count, Sum

from agent.prompts import CONTINUE_NOTE
from agent.tokens import estimate_tokens
from conversations import branches, services
from conversations.models import Conversation, Message
from conversations.views import PAGE_SIZE
from tests.agent.helpers import is_summarizer_request, memory_responder
from tests.support import seed
from tests.support.openai_replies import Reply, count_tokens, forced_tool, message_texts
from tests.support.turns import ask
from transfers import imports

pytestmark = pytest.mark.django_db(transaction=True)
FIXTURES = Path(__file__).parent / "import_fixtures"
new_conversation = sync_to_async(services.create_conversation)


def cut_then_go_on(*, usage_on_cut: bool):
    """Answer at length-limit first ("One two three"), then the rest after a continue."""

    def respond(body: dict) -> Reply:
        if forced_tool(body) or is_summarizer_request(body):
            return memory_responder(body)
        if any(CONTINUE_NOTE[:30] in t for t in message_texts(body)):
            return Reply(text=" four five six seven eight nine ten.")
        return Reply(text="One two three", finish_reason="length", send_usage=usage_on_cut)

    return respond


def assert_totals_add_up(conversation_id) -> None:
    conversation = Conversation.objects.get(pk=conversation_id)
    sums = conversation.messages.aggregate(n=Count("id"), tokens=Sum("tokens_used"))
    assert conversation.message_count == sums["n"]
    assert conversation.total_tokens_used == (sums["tokens"] or 0)


async def test_a_continued_reply_records_the_tokens_of_its_whole_text(model, alice):
    model.responder = cut_then_go_on(usage_on_cut=True)
    conversation = await new_conversation(user=alice)
    cut, _ = await ask(alice, conversation, content="Count to ten in words.")
    assert cut.tokens_used == count_tokens("One two three") and not cut.tokens_estimated
    whole, frames = await ask(alice, conversation, kind="continue", message_id=cut.pk)
    assert whole.content == "One two three four five six seven eight nine ten."
    # What the model wrote for it, both parts: the server's counts, added up.
    assert whole.tokens_used == count_tokens(whole.content) == 11
    assert not whole.tokens_estimated
    assert whole.metadata["continued"] == {"from": str(cut.pk), "tokens": cut.tokens_used}
    finished = next(f for f in frames if f["type"] == "generation.finished")
    assert finished["message"]["tokens_used"] == whole.tokens_used
    await sync_to_async(assert_totals_add_up)(conversation.pk)


async def test_continuing_a_reply_whose_count_was_estimated_stays_marked_estimated(model, alice):
    model.responder = cut_then_go_on(usage_on_cut=False)  # as llama.cpp's server: no usage
    conversation = await new_conversation(user=alice)
    cut, _ = await ask(alice, conversation, content="Count to ten in words.")
    assert cut.tokens_estimated and cut.tokens_used == estimate_tokens("One two three")
    whole, _ = await ask(alice, conversation, kind="continue", message_id=cut.pk)
    rest = " four five six seven eight nine ten."
    assert whole.tokens_used == cut.tokens_used + count_tokens(rest)
    assert whole.tokens_used >= estimate_tokens(whole.content) - 2  # the whole, not a fragment
    assert whole.tokens_estimated and whole.metadata["tokens_estimated"] is True
    await sync_to_async(assert_totals_add_up)(conversation.pk)


async def test_a_users_message_is_an_estimate_a_reported_reply_is_not_and_totals_add_up(
    model, alice
):
    conversation = await new_conversation(user=alice)
    first, _ = await ask(alice, conversation, content="Hello there, how are you today?")
    question = await Message.objects.aget(pk=first.parent_id)
    assert question.tokens_used == estimate_tokens(question.content) > 0
    assert question.metadata["tokens_estimated"] is True
    assert first.tokens_used == count_tokens(first.content)
    assert "tokens_estimated" not in first.metadata and not first.tokens_estimated
    again, _ = await ask(alice, conversation, kind="regenerate", message_id=first.pk)
    await ask(alice, conversation, content="And another thing.")
    await sync_to_async(assert_totals_add_up)(conversation.pk)
    await sync_to_async(branches.delete_message)(user=alice, message_id=again.pk)
    await sync_to_async(assert_totals_add_up)(conversation.pk)


def test_imported_messages_get_estimated_tokens_marked_estimated(alice):
    data = (FIXTURES / "chatgpt_conversations.json").read_bytes()
    stored = imports.import_file(user=alice, source=io.BytesIO(data)).conversations
    assert stored
    for conversation in stored:
        for message in conversation.messages.all():
            if message.content:
                assert message.tokens_used == estimate_tokens(message.content) > 0
                assert message.tokens_estimated and message.metadata["tokens_estimated"] is True
        assert_totals_add_up(conversation.pk)
        assert conversation.total_tokens_used > 0


def test_an_export_that_gives_counts_keeps_them_unmarked(alice):
    export = {
        "format": "chatsite.conversation",
        "version": 1,
        "conversation": {"title": "Counted"},
        "messages": [
            {"sequence_number": 1, "role": "user", "content": "Hi", "tokens_used": 3},
            {"sequence_number": 2, "role": "assistant", "content": "Hello!", "tokens_used": 7},
            {"sequence_number": 3, "role": "user", "content": "Bye for now"},
        ],
    }
    conversation = imports.import_conversation(user=alice, raw=json.dumps(export))
    hi, hello, bye = conversation.messages.order_by("sequence_number")
    assert (hi.tokens_used, hello.tokens_used) == (3, 7)
    assert not hi.tokens_estimated and not hello.tokens_estimated
    assert bye.tokens_used == estimate_tokens("Bye for now") and bye.tokens_estimated
    assert conversation.total_tokens_used == 3 + 7 + bye.tokens_used
    assert_totals_add_up(conversation.pk)


def test_the_header_counts_the_whole_branch_when_the_page_shows_part_of_it(alice_client, alice):
    conversation = services.create_conversation(user=alice, title="Long")
    for n in range(60):
        seed.add_message(
            conversation_id=conversation.id,
            role="user" if n % 2 == 0 else "assistant",
            content=f"message {n}",
            tokens_used=10,
        )
    leaf = conversation.messages.order_by("-sequence_number").first()
    # Another version of the last reply, on a branch the page does not show.
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content="another version",
        tokens_used=99,
        parent=leaf.parent_id,
        make_current=False,
        metadata={"tokens_estimated": True},
    )
    page = alice_client.get(f"/conversations/{conversation.id}/").text
    assert page.count('data-tokens="10"') == PAGE_SIZE  # the newest page of the branch
    assert 'data-hidden-messages="10"' in page and 'data-hidden-tokens="100"' in page
    assert "60 messages · 600 tokens" in page  # the branch, not the other version
    older = alice_client.get(f"/conversations/{conversation.id}/messages/fragment/")
    assert older.headers["X-Hidden-Messages"] == "10"
    assert (older.headers["X-Hidden-Tokens"], older.headers["X-Hidden-Estimated"]) == ("100", "0")
    filtered = alice_client.get(f"/conversations/{conversation.id}/?role=user").text
    assert "60 messages · 600 tokens" in filtered
    assert 'data-hidden-messages="30"' in filtered
