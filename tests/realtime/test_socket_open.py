"""Opening a conversation socket: checked after the accept, without waiting on anything
shared (the access check, the one thread-sensitive thread), and nothing lost meanwhile."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from .conftest import make_conversation, make_token, open_socket, receive

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flush_redis")]


def slow_check(monkeypatch, seconds: float) -> asyncio.Event:
    """Make the socket's access check take `seconds`; return an event set when it starts."""
    from conversations import consumers

    checking, real = asyncio.Event(), consumers.asocket_access

    async def slow(**kwargs):
        checking.set()
        await asyncio.sleep(seconds)
        return await real(**kwargs)

    monkeypatch.setattr(consumers, "asocket_access", slow)
    return checking


async def test_a_rename_made_while_the_socket_is_checked_reaches_it(alice, monkeypatch):
    from conversations import services

    token, conversation = await make_token(alice), await make_conversation(alice)
    checking = slow_check(monkeypatch, 0.5)
    comm = open_socket(conversation.id, token=token)
    connecting = asyncio.ensure_future(comm.connect())
    await checking.wait()  # open to the client; its check not done
    assert (await connecting)[0]
    await database_sync_to_async(services.rename_conversation)(
        conversation=conversation, title="Renamed meanwhile"
    )
    frame = await receive(comm)  # held during the check, then sent
    assert frame["type"] == "conversation.updated"
    assert frame["conversation"]["title"] == "Renamed meanwhile"
    await comm.disconnect()


async def test_a_stranger_hears_nothing_of_what_happened_while_he_was_checked(
    alice, bob, monkeypatch
):
    from conversations import services

    conversation = await make_conversation(alice)
    checking = slow_check(monkeypatch, 0.5)
    comm = open_socket(conversation.id, token=await make_token(bob))
    connecting = asyncio.ensure_future(comm.connect())
    await checking.wait()
    await database_sync_to_async(services.rename_conversation)(
        conversation=conversation, title="Alice's secret plan"
    )
    assert (await connecting)[0]  # accepted, so that the client sees the close code
    assert (await comm.receive_output(timeout=3)) == {"type": "websocket.close", "code": 4404}
    assert await comm.receive_nothing(timeout=0.3)


async def test_a_socket_session_queues_nothing_on_the_one_sync_thread(alice, monkeypatch):
    """Channels' per-message `close_old_connections` ran on asgiref's single thread, so
    every socket of the process waited in one line; ours close their own connections."""
    import channels.consumer
    import channels.generic.websocket

    hops: list[str] = []

    async def counted():
        hops.append("close_old_connections")

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", counted)
    monkeypatch.setattr(channels.generic.websocket, "aclose_old_connections", counted)
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = open_socket(conversation.id, token=token)
    assert (await comm.connect())[0]
    await comm.send_json_to({"type": "ping"})
    assert (await receive(comm))["type"] == "pong"
    await comm.disconnect()
    assert hops == []
