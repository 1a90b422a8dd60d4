"""The agent's memory follows the branch: the real agent, a fake OpenAI-compatible server.

What the model is sent is the proof: a reply on branch B never sees what was said only
on branch A, summaries included, and switching back continues A's memory.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from agent.prompts import CONTINUE_NOTE
from conversations import branches, services
from conversations.models import Message
from conversations.replies import Ask, start_reply
from conversations.tree import Tree
from core.errors import Invalid
from tests.agent.helpers import is_summarizer_request, memory_responder
from tests.support.openai_replies import Reply, forced_tool, message_texts
from tests.support.turns import ask

from .conftest import sent_to_model

pytestmark = pytest.mark.django_db(transaction=True)


async def test_an_edit_starts_a_branch_whose_memory_knows_only_its_own_past(model, alice):
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    await ask(alice, conversation, content="Hello there.")
    first, _ = await ask(alice, conversation, content="My dog is Bori.")
    question_a = await Message.objects.aget(pk=first.parent_id)
    await ask(alice, conversation, content="Noted?")

    # Branch B: the pet message edited.
    edited, frames = await ask(
        alice, conversation, kind="edit", message_id=question_a.pk, content="My cat is Nabi."
    )
    question_b = await Message.objects.aget(pk=edited.parent_id)
    assert question_b.parent_id == question_a.parent_id  # a sibling of the original
    created = [f["message"] for f in frames if f["type"] == "message.created"]
    assert created[0]["sibling_ids"] == [str(question_a.pk), str(question_b.pk)]
    await ask(alice, conversation, content="What pet do I have?")
    seen = sent_to_model(model)
    assert "Nabi" in seen and "Bori" not in seen and "Noted?" not in seen
    assert "Hello there." in seen  # what came before the fork point is shared

    # Back to A: its memory goes on where A left off.
    await sync_to_async(branches.switch_branch)(user=alice, message_id=question_a.pk)
    await ask(alice, conversation, content="What pet do I have, again?")
    seen = sent_to_model(model)
    assert "Bori" in seen and "Noted?" in seen and "Nabi" not in seen


async def test_summaries_on_both_sides_of_the_fork_point_stay_on_their_branch(
    model, alice, settings
):
    settings.MEMORY_MAX_MESSAGES = 4
    settings.MEMORY_KEEP_RECENT = 2
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    for fact in ["I live in Busan.", "I work as a baker.", "I was born in 1990."]:
        await ask(alice, conversation, content=fact)
    fork_reply, _ = await ask(alice, conversation, content="My dog is Bori.")
    for fact in ["My car is crimson.", "I like bebop jazz.", "I play xiangqi."]:
        await ask(alice, conversation, content=fact)
    question_a = await Message.objects.aget(pk=fork_reply.parent_id)
    summaries_a = [b for b in model.requests if is_summarizer_request(b)]
    assert summaries_a, "branch A is long enough to be summarized"

    await ask(alice, conversation, kind="edit", message_id=question_a.pk, content="My cat is Nabi.")
    await ask(alice, conversation, content="Tell me what you know about me.")
    seen = sent_to_model(model)
    assert "Busan" in seen  # before the fork point: in B's past (summarized or verbatim)
    for later in ("Bori", "crimson", "bebop", "xiangqi"):
        assert later not in seen, later
    assert "Nabi" in seen


async def test_regenerate_answers_the_same_question_from_the_same_memory(model, alice):
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    await ask(alice, conversation, content="My dog is Bori.")
    reply, _ = await ask(alice, conversation, content="What pet do I have?")
    await ask(alice, conversation, content="Something after.")
    requests_before = len(model.requests)
    again, frames = await ask(alice, conversation, kind="regenerate", message_id=reply.pk)
    assert again.parent_id == reply.parent_id and again.pk != reply.pk
    assert [f["type"] for f in frames].count("message.created") == 1  # only the new reply
    seen = sent_to_model(model)
    assert "Bori" in seen and "Something after." not in seen
    # Branching costs no LLM call beyond the turn itself.
    assert len(model.requests) - requests_before == 1
    await conversation.arefresh_from_db()
    assert conversation.current_message_id == again.pk
    tree = await sync_to_async(Tree.of)(conversation.pk)
    assert tree.siblings(again.pk) == [reply.pk, again.pk]


def cut_then_go_on(body: dict) -> Reply:
    """Stop at the length limit on the first answer; continue with the rest after."""
    if forced_tool(body) or is_summarizer_request(body):
        return memory_responder(body)
    texts = message_texts(body)
    if any(CONTINUE_NOTE[:30] in t for t in texts):
        return Reply(text=" four five six.")
    return Reply(text="One two three", finish_reason="length")


async def test_continue_goes_on_from_the_cut_text_and_stores_the_whole(model, alice):
    model.responder = cut_then_go_on
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    cut, _ = await ask(alice, conversation, content="Count to six in words.")
    assert (cut.content, cut.finish_reason) == ("One two three", "max_tokens")
    whole, frames = await ask(alice, conversation, kind="continue", message_id=cut.pk)
    assert whole.content == "One two three four five six."
    assert whole.parent_id == cut.parent_id and whole.pk != cut.pk
    started = next(f for f in frames if f["type"] == "generation.started")
    assert started["continues"] == str(cut.pk) and started["text_offset"] == len(cut.content)
    tokens = [f for f in frames if f["type"] == "token"]
    assert tokens[0]["index"] == len(cut.content)  # the text grows in place
    # The model saw the cut text as its own last words, then the instruction.
    request = [b for b in model.requests if not forced_tool(b)][-1]
    assert request["messages"][-2] == {"role": "assistant", "content": "One two three"}
    # Its memory holds the whole reply once, under the new id, and not the cut one.
    await ask(alice, conversation, content="And then?")
    seen = sent_to_model(model)
    assert seen.count("One two three") == 1 and "four five six" in seen


async def test_a_continue_of_a_reply_that_was_not_cut_is_refused(model, alice):
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    reply, _ = await ask(alice, conversation, content="Hi.")
    question = await Message.objects.aget(pk=reply.parent_id)
    for target in (reply, question):
        with pytest.raises(Invalid):
            await start_reply(
                user=alice, ask=Ask.continue_from(target.pk), conversation_id=conversation.id
            )
    assert await Message.objects.filter(conversation=conversation).acount() == 2
