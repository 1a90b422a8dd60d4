"""Who may open the socket (SPEC: 4401 / 4404, origin check), and interrupted replies."""

from __future__ import annotations

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from conversations.models import Message, ReplyRun
from conversations.realtime import progress
from conversations.replies import Ask, start_reply, threads
from core.errors import Conflict
from tests.support import seed

from .conftest import make_conversation, make_token, open_socket, receive, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flush_redis")]


async def closed_code(comm) -> int:
    ok, _ = await comm.connect()
    assert ok  # accepted first, so the client sees the code
    return (await comm.receive_output(timeout=5))["code"]


async def test_no_token_and_no_origin_is_closed_4401(alice):
    conversation = await make_conversation(alice)
    assert await closed_code(open_socket(conversation.id)) == 4401


async def test_bad_token_is_closed_4401(alice):
    conversation = await make_conversation(alice)
    assert await closed_code(open_socket(conversation.id, token="cht_nope_nope")) == 4401


async def test_other_users_conversation_is_closed_4404(alice, bob):
    conversation = await make_conversation(alice)
    assert await closed_code(open_socket(conversation.id, token=await make_token(bob))) == 4404


async def test_missing_conversation_is_closed_4404(alice):
    token = await make_token(alice)
    assert await closed_code(open_socket("not-a-uuid", token=token)) == 4404
    missing = "00000000-0000-0000-0000-000000000000"
    assert await closed_code(open_socket(missing, token=token)) == 4404


@database_sync_to_async
def session_cookie(user) -> bytes:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def test_browser_session_with_allowed_origin_connects(alice):
    conversation = await make_conversation(alice)
    cookie = await session_cookie(alice)
    headers = [(b"cookie", cookie), (b"origin", b"http://testserver")]
    comm = open_socket(conversation.id, headers=headers)
    assert (await comm.connect())[0]
    await comm.send_json_to({"type": "ping"})
    assert await receive(comm) == {"type": "pong"}
    await comm.disconnect()


async def test_browser_session_from_a_foreign_origin_is_refused(alice):
    conversation = await make_conversation(alice)
    cookie = await session_cookie(alice)
    headers = [(b"cookie", cookie), (b"origin", b"http://evil.example")]
    ok, _ = await open_socket(conversation.id, headers=headers).connect()
    assert not ok


async def test_cookie_without_origin_is_not_used(alice):
    conversation = await make_conversation(alice)
    comm = open_socket(conversation.id, headers=[(b"cookie", await session_cookie(alice))])
    assert await closed_code(comm) == 4401


async def test_a_dead_processs_reply_is_stored_as_interrupted(alice):
    conversation = await make_conversation(alice)
    run_id = "11111111-2222-3333-4444-555555555555"
    await database_sync_to_async(_fake_dead_run)(conversation, run_id)
    await progress.astart(conversation_id=conversation.pk, run_id=run_id, reply_to="x")
    text = "half a rep"
    await progress.aappend(
        conversation_id=conversation.pk,
        append=progress.Append(run_id, "x", text, text, len(text.encode())),
    )
    comm = open_socket(conversation.id, token=await make_token(alice))
    assert (await comm.connect())[0]
    frames = await receive_until(comm, "generation.finished")
    assert frames[-1]["finish_reason"] == "interrupted"
    reply = await Message.objects.aget(pk=run_id)
    assert (reply.content, reply.finish_reason) == ("half a rep", "interrupted")
    run = await ReplyRun.objects.aget(pk=run_id)
    assert run.status == "finished" and run.finished_at is not None
    # The dead process saved no checkpoint; the agent still remembers the exchange.
    await conversation.arefresh_from_db()
    memory = await threads.aread_agent_memory(conversation)
    assert [(m["role"], m["content"]) for m in memory["messages"]] == [
        ("user", "hi"),
        ("assistant", "half a rep"),
    ]
    await comm.disconnect()


def _fake_run(conversation, run_id, heartbeat_at):
    question = seed.add_message(conversation_id=conversation.pk, role="user", content="hi")
    ReplyRun.objects.create(
        id=run_id, conversation=conversation, reply_to=question, heartbeat_at=heartbeat_at
    )


def _fake_dead_run(conversation, run_id):
    _fake_run(conversation, run_id, timezone.now() - timedelta(minutes=5))


async def test_start_reply_returns_the_stored_assistant_message(alice, fake_agent):
    conversation = await make_conversation(alice)
    started = await start_reply(
        user=alice, ask=Ask.send("hi", client_id="k1"), conversation_id=conversation.id
    )
    reply = await started.assistant_message()
    assert reply.pk == started.run_id and reply.finish_reason == "end_turn"
    again = await start_reply(
        user=alice, ask=Ask.send("hi", client_id="k1"), conversation_id=conversation.id
    )
    assert not again.created and again.user_message.pk == started.user_message.pk
    assert (await again.assistant_message()).pk == reply.pk


async def test_a_message_after_a_dead_processs_reply_starts_a_new_one(alice, fake_agent):
    conversation = await make_conversation(alice)
    run_id = "22222222-3333-4444-5555-666666666666"
    await database_sync_to_async(_fake_dead_run)(conversation, run_id)
    started = await start_reply(user=alice, ask=Ask.send("again"), conversation_id=conversation.id)
    reply = await started.assistant_message()
    assert reply.finish_reason == "end_turn"
    dead = await Message.objects.aget(pk=run_id)
    assert dead.finish_reason == "interrupted"
    roles = [m.role async for m in Message.objects.filter(conversation=conversation)]
    assert roles == ["user", "assistant", "user", "assistant"]  # nothing the user wrote lost


async def test_a_message_while_a_live_reply_runs_is_busy_and_stores_nothing(alice):
    conversation = await make_conversation(alice)
    await database_sync_to_async(_fake_live_run)(conversation)
    with pytest.raises(Conflict) as raised:
        await start_reply(user=alice, ask=Ask.send("again"), conversation_id=conversation.id)
    assert raised.value.code == "busy"
    assert await Message.objects.filter(conversation=conversation).acount() == 1


def _fake_live_run(conversation):
    _fake_run(conversation, "33333333-4444-5555-6666-777777777777", timezone.now())


@pytest.mark.parametrize("path", ["/ws/nope/", "/ws/conversations/", "/ws/conversations/x/y/"])
async def test_an_unknown_socket_path_is_closed_4404_not_a_500(alice, path):
    from channels.testing import WebsocketCommunicator

    from chatsite.asgi import application

    headers = [(b"authorization", f"Bearer {await make_token(alice)}".encode())]
    comm = WebsocketCommunicator(application, path, headers=headers)
    assert await closed_code(comm) == 4404
