"""Branching deep into a long conversation gives every branch its own memory, though
the agent's thread keeps one checkpoint: a branch point's memory is rebuilt from the rows.

Every user message plants a numbered word (`kw<turn>q`); what the model is sent shows
which turns a branch remembers, summaries included.
"""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings as django_settings

from agent.checkpoint import get_checkpointer
from agent.prompts import CONTINUE_NOTE
from conversations import branches, forks, services
from tests.agent.helpers import is_summarizer_request, memory_responder
from tests.support.openai_replies import Reply, forced_tool, message_texts
from tests.support.turns import ask

from .conftest import sent_to_model

pytestmark = pytest.mark.django_db(transaction=True)

# 100 turns fold their messages into summaries twenty times over, merging the oldest each
# time the window of summaries is full, and leave turn 60 long pruned from the thread: what
# 500 turns proved, at a fifth of the time (the branch points keep their places: 3/5, 1/2
# and 4/5 of the way).
TURNS = 100
REGENERATED, EDITED, FORKED = 60, 50, 80


def note(turn: int) -> str:
    return f"Note {turn}: the code word is kw{turn}q."


def turns_in(seen: str) -> set[int]:
    return {int(n) for n in re.findall(r"kw(\d+)q", seen)}


def cut_on_request(body: dict) -> Reply:
    """Stop at the length limit when asked to; go on when continued."""
    if forced_tool(body) or is_summarizer_request(body):
        return memory_responder(body)
    texts = message_texts(body)
    if any(CONTINUE_NOTE[:30] in t for t in texts):
        return Reply(text=" four five six.")
    if "Cut me off" in texts[-1]:
        return Reply(text="One two three", finish_reason="length")
    return memory_responder(body)


async def checkpoints_of(conversation_id) -> int:
    saver = await get_checkpointer(django_settings.CHECKPOINT_URL)
    config = {"configurable": {"thread_id": str(conversation_id)}}
    return len([c async for c in saver.alist(config)])


def memory_of(reply) -> tuple[list[str], list[str]]:
    """Return the summaries and message ids a reply's model was given (its ledger)."""
    ledger = reply.metadata["context"]
    return [s["text"] for s in ledger["summaries"]], ledger["message_ids"]


async def test_every_kind_of_branch_deep_in_a_long_conversation_has_its_own_memory(
    model, alice, settings
):
    settings.CHAT_RATE_LIMIT = "100000/m"
    model.responder = cut_on_request
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    replies = []
    for turn in range(1, TURNS + 1):
        reply, _ = await ask(alice, conversation, content=note(turn))
        replies.append(reply)
    assert await checkpoints_of(conversation.pk) == 1
    last_summaries, _ids = memory_of(replies[-1])
    assert last_summaries and max(turns_in(" ".join(last_summaries))) < TURNS

    # Regenerate the last reply: the same question from the same memory (the thread's own).
    again, _ = await ask(alice, conversation, kind="regenerate", message_id=replies[-1].pk)
    assert memory_of(again) == memory_of(replies[-1])

    # Regenerate an old reply: memory long pruned from the thread, rebuilt the same.
    old, _ = await ask(
        alice, conversation, kind="regenerate", message_id=replies[REGENERATED - 1].pk
    )
    assert memory_of(old) == memory_of(replies[REGENERATED - 1])
    assert max(turns_in(sent_to_model(model))) == REGENERATED

    # Edit an older message: the turns before it, and the new words; nothing later.
    question = replies[EDITED - 1].parent_id
    edited_text = f"Note {EDITED}: the code word is edited{EDITED}z."
    await ask(alice, conversation, kind="edit", message_id=question, content=edited_text)
    seen = sent_to_model(model)
    assert f"edited{EDITED}z" in seen and max(turns_in(seen)) == EDITED - 1
    await ask(alice, conversation, content="What comes next on this branch?")
    seen = sent_to_model(model)
    assert f"edited{EDITED}z" in seen and max(turns_in(seen)) == EDITED - 1

    # Switch back to the first branch and send: its memory goes on where it left off.
    await sync_to_async(branches.switch_branch)(user=alice, message_id=replies[-1].pk)
    await ask(alice, conversation, content="And on the first branch?")
    seen = sent_to_model(model)
    assert TURNS in turns_in(seen) and f"edited{EDITED}z" not in seen

    # Continue a reply cut short: the model goes on from its text, on this branch.
    cut, _ = await ask(alice, conversation, content="Cut me off please.")
    assert cut.finish_reason == "max_tokens"
    whole, _ = await ask(alice, conversation, kind="continue", message_id=cut.pk)
    assert whole.content == "One two three four five six."
    seen = sent_to_model(model)
    assert CONTINUE_NOTE[:30] in seen and TURNS in turns_in(seen)

    # Fork further on: the fork remembers up to it, nothing of either later branch.
    fork = await forks.afork_conversation(
        user=alice, conversation_id=conversation.pk, from_message_id=replies[FORKED - 1].pk
    )
    await ask(alice, fork, content="What do you remember?")
    seen = sent_to_model(model)
    assert max(turns_in(seen)) == FORKED and f"edited{EDITED}z" not in seen
    assert FORKED in turns_in(seen)  # in the window, word for word

    # However many branches, each thread keeps one checkpoint.
    assert await checkpoints_of(conversation.pk) == 1
    assert await checkpoints_of(fork.pk) == 1
