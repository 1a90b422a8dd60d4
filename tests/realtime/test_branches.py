"""Regenerate, edit, continue and switch over the conversation socket (SPEC: Branches)."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from conversations.models import Conversation, Message

from .conftest import (
    connected,
    make_conversation,
    make_token,
    receive,
    receive_until,
    stitch,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flush_redis")]


async def first_exchange(comm) -> tuple[dict, dict]:
    """Send one message; return the stored (user message, reply) as the socket saw them."""
    await comm.send_json_to({"type": "message.send", "content": "hello"})
    frames = await receive_until(comm, "generation.finished")
    created = [f["message"] for f in frames if f["type"] == "message.created"]
    return created[0], created[1]


@database_sync_to_async
def current_of(conversation_id) -> str | None:
    pk = Conversation.objects.get(pk=conversation_id).current_message_id
    return str(pk) if pk else None


async def test_regenerate_makes_a_sibling_reply_and_moves_the_branch(alice, fake_agent):
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = await connected(conversation.id, token)
    question, reply = await first_exchange(comm)
    await comm.send_json_to({"type": "message.regenerate", "message_id": reply["id"]})
    frames = await receive_until(comm, "generation.finished")
    kinds = [f["type"] for f in frames]
    assert kinds[0] == "conversation.updated"  # the branch shows the question meanwhile
    assert frames[0]["conversation"]["current_message_id"] == question["id"]
    assert "generation.started" in kinds
    created = [f["message"] for f in frames if f["type"] == "message.created"]
    assert len(created) == 1 and created[0]["role"] == "assistant"  # no new user message
    again = created[0]
    assert again["parent_id"] == question["id"]
    assert again["sibling_ids"] == [reply["id"], again["id"]]
    assert stitch(frames, again["id"]) == again["content"]
    assert await current_of(conversation.id) == again["id"]
    assert fake_agent.calls == ["hello", "hello"]
    await comm.disconnect()


async def test_edit_stores_a_sibling_question_and_answers_it_once_per_client_id(alice, fake_agent):
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = await connected(conversation.id, token)
    question, _reply = await first_exchange(comm)
    edit = {
        "type": "message.edit",
        "message_id": question["id"],
        "content": "hello, edited",
        "client_id": "e1",
    }
    await comm.send_json_to(edit)
    frames = await receive_until(comm, "generation.finished")
    created = [f["message"] for f in frames if f["type"] == "message.created"]
    edited = created[0]
    assert (edited["role"], edited["content"], edited["parent_id"]) == (
        "user",
        "hello, edited",
        None,
    )
    assert edited["sibling_ids"] == [question["id"], edited["id"]]
    assert created[1]["parent_id"] == edited["id"]
    await comm.send_json_to(edit)  # the same client_id again: nothing new
    await asyncio.sleep(0.3)
    assert await Message.objects.filter(conversation_id=conversation.id).acount() == 4
    assert fake_agent.calls == ["hello", "hello, edited"]
    await comm.disconnect()


async def test_switch_tells_every_socket_and_sync_names_the_current_leaf(alice, fake_agent):
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm, other = await connected(conversation.id, token), await connected(conversation.id, token)
    _question, reply = await first_exchange(comm)
    await receive_until(other, "generation.finished")
    await comm.send_json_to({"type": "message.regenerate", "message_id": reply["id"]})
    await receive_until(comm, "generation.finished")
    await receive_until(other, "generation.finished")
    await comm.send_json_to({"type": "branch.switch", "message_id": reply["id"]})
    for sock in (comm, other):
        frame = await receive(sock)
        assert frame["type"] == "conversation.updated"
        assert frame["conversation"]["current_message_id"] == reply["id"]
    await other.send_json_to({"type": "sync", "after": 0})
    state = await receive_until(other, "sync.state")
    state = state[-1]
    assert state["current_message_id"] == reply["id"]
    assert len(state["messages"]) == 3  # every branch
    await comm.disconnect()
    await other.disconnect()


async def test_another_users_message_is_not_found_and_nothing_changes(alice, bob, fake_agent):
    conversation = await make_conversation(alice)
    comm = await connected(conversation.id, await make_token(alice))
    _question, reply = await first_exchange(comm)
    theirs = await make_conversation(bob)
    bob_comm = await connected(theirs.id, await make_token(bob))
    for frame in (
        {"type": "message.regenerate", "message_id": reply["id"]},
        {"type": "message.continue", "message_id": reply["id"]},
        {"type": "message.edit", "message_id": reply["id"], "content": "x"},
        {"type": "branch.switch", "message_id": reply["id"]},
        {"type": "message.regenerate", "message_id": "not-a-uuid"},
    ):
        await bob_comm.send_json_to(frame)
        error = await receive(bob_comm)
        assert (error["type"], error["code"]) == ("error", "not_found"), frame
    assert await Message.objects.filter(conversation_id=conversation.id).acount() == 2
    assert fake_agent.calls == ["hello"]
    await comm.disconnect()
    await bob_comm.disconnect()


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ({"type": "message.regenerate"}, "invalid"),
        ({"type": "message.regenerate", "message_id": 5}, "invalid"),
        ({"type": "message.edit", "message_id": "x"}, "invalid"),
        ({"type": "message.edit", "message_id": "x", "content": "a\x00b"}, "invalid"),
        ({"type": "branch.switch", "message_id": "x" * 101}, "invalid"),
        ({"type": "message.continue", "message_id": "x", "extra": 1}, "invalid"),
    ],
)
async def test_malformed_branch_frames_get_invalid(alice, fake_agent, frame, code):
    comm = await connected((await make_conversation(alice)).id, await make_token(alice))
    await comm.send_json_to(frame)
    error = await receive(comm)
    assert (error["type"], error["code"]) == ("error", code)
    await comm.send_json_to({"type": "ping"})
    assert (await receive(comm))["type"] == "pong"
    await comm.disconnect()


async def test_edit_of_a_reply_and_continue_of_a_finished_reply_are_invalid(alice, fake_agent):
    comm = await connected((await make_conversation(alice)).id, await make_token(alice))
    question, reply = await first_exchange(comm)
    for frame in (
        {"type": "message.edit", "message_id": reply["id"], "content": "x"},
        {"type": "message.continue", "message_id": reply["id"]},
        {"type": "message.continue", "message_id": question["id"]},
    ):
        await comm.send_json_to(frame)
        error = await receive(comm)
        assert (error["type"], error["code"]) == ("error", "invalid"), frame
    await comm.disconnect()


async def test_regenerate_while_a_reply_runs_is_busy(alice, fake_agent):
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = await connected(conversation.id, token)
    _question, reply = await first_exchange(comm)
    fake_agent.gate = asyncio.Event()
    await comm.send_json_to({"type": "message.send", "content": "second"})
    await receive_until(comm, "generation.started")
    await comm.send_json_to({"type": "message.regenerate", "message_id": reply["id"]})
    frames = await receive_until(comm, "error")
    assert frames[-1]["code"] == "busy"
    fake_agent.gate.set()
    await receive_until(comm, "generation.finished")
    assert fake_agent.calls == ["hello", "second"]
    await comm.disconnect()


async def test_stop_during_a_regenerate_keeps_the_partial_version_and_the_original(
    alice, fake_agent
):
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = await connected(conversation.id, token)
    _question, reply = await first_exchange(comm)
    fake_agent.gate = asyncio.Event()
    await comm.send_json_to({"type": "message.regenerate", "message_id": reply["id"]})
    await receive_until(comm, "generation.started")
    await asyncio.sleep(0.1)
    await comm.send_json_to({"type": "generation.stop"})
    finished = (await receive_until(comm, "generation.finished"))[-1]
    assert finished["finish_reason"] == "stopped"
    stopped = finished["message"]
    assert stopped["content"] == "".join(fake_agent.tokens[:5])
    assert stopped["sibling_ids"] == [reply["id"], stopped["id"]]
    assert await Message.objects.filter(pk=reply["id"]).aexists()
    await comm.disconnect()


async def test_continue_streams_from_the_cut_texts_end_and_stores_the_whole(alice, fake_agent):
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = await connected(conversation.id, token)
    fake_agent.gate = asyncio.Event()
    await comm.send_json_to({"type": "message.send", "content": "hello"})
    await receive_until(comm, "generation.started")
    await asyncio.sleep(0.1)
    await comm.send_json_to({"type": "generation.stop"})
    cut = (await receive_until(comm, "generation.finished"))[-1]["message"]
    fake_agent.gate = None
    await comm.send_json_to({"type": "message.continue", "message_id": cut["id"]})
    frames = await receive_until(comm, "generation.finished")
    started = next(f for f in frames if f["type"] == "generation.started")
    assert (started["continues"], started["text_offset"]) == (cut["id"], len(cut["content"]))
    whole = frames[-1]["message"]
    assert whole["content"] == cut["content"] + "".join(fake_agent.tokens)
    assert stitch(frames, whole["id"], cut["content"]) == whole["content"]
    assert whole["sibling_ids"] == [cut["id"], whole["id"]]
    await comm.disconnect()


async def test_reconnecting_mid_regenerate_with_sync_gets_the_full_text_once(alice, fake_agent):
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = await connected(conversation.id, token)
    _question, reply = await first_exchange(comm)
    fake_agent.gate = asyncio.Event()
    await comm.send_json_to({"type": "message.regenerate", "message_id": reply["id"]})
    started = (await receive_until(comm, "generation.started"))[-1]
    await comm.disconnect()
    await asyncio.sleep(0.1)
    again = await connected(conversation.id, token)
    await again.send_json_to({"type": "sync", "after": reply["sequence_number"]})
    state = (await receive_until(again, "sync.state"))[-1]
    assert state["messages"] == []
    assert state["generation"]["run_id"] == started["run_id"]
    text = state["generation"]["text"]
    assert text == "".join(fake_agent.tokens[:5])
    fake_agent.gate.set()
    frames = await receive_until(again, "generation.finished")
    assert stitch(frames, started["run_id"], text) == frames[-1]["message"]["content"]
    assert frames[-1]["message"]["content"] == "".join(fake_agent.tokens)
    await again.disconnect()
