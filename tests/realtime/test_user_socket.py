"""The list pages' socket: a user's conversation changes reach all of their tabs."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from conversations import services

from .conftest import make_conversation, make_token, receive

pytestmark = pytest.mark.django_db(transaction=True)


def open_user_socket(token: str | None):
    from channels.testing import WebsocketCommunicator

    from chatsite.asgi import application

    headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
    return WebsocketCommunicator(application, "/ws/user/", headers=headers)


async def test_new_and_renamed_conversations_reach_the_users_socket(alice, bob):
    mine = open_user_socket(await make_token(alice))
    theirs = open_user_socket(await make_token(bob))
    assert (await mine.connect())[0] and (await theirs.connect())[0]
    conversation = await make_conversation(alice, "Plans")
    created = await receive(mine)
    assert created["type"] == "conversation.updated"
    assert created["conversation"]["title"] == "Plans"
    await database_sync_to_async(services.rename_conversation)(
        conversation=conversation, title="새 계획"
    )
    renamed = await receive(mine)
    assert renamed["conversation"]["title"] == "새 계획"
    assert await theirs.receive_nothing(timeout=0.5)
    conversation_id = str(conversation.id)
    await database_sync_to_async(services.delete_conversation)(conversation=conversation)
    deleted = await receive(mine)
    assert deleted == {"type": "conversation.deleted", "conversation_id": conversation_id}
    await mine.disconnect()
    await theirs.disconnect()


async def test_a_list_socket_opens_before_its_subscription_and_hears_what_came_meanwhile(
    alice, monkeypatch
):
    from conversations.realtime.hub import get_hub

    hub, subscribing = get_hub(), asyncio.Event()
    real = hub._subscribe_group

    async def slow(group):  # Redis far away, or busy with 400 streams
        subscribing.set()
        await asyncio.sleep(0.8)
        return await real(group)

    monkeypatch.setattr(hub, "_subscribe_group", slow)
    comm = open_user_socket(await make_token(alice))
    connecting = asyncio.ensure_future(comm.connect(timeout=3))
    await subscribing.wait()
    # Open to the client without waiting for the subscription (Daphne drops a handshake
    # that takes longer than 5 s); what is posted meanwhile is held, then sent.
    assert (await asyncio.wait_for(connecting, 0.4))[0]
    await make_conversation(alice, "Meanwhile")
    created = await receive(comm)
    assert created["type"] == "conversation.updated"
    assert created["conversation"]["title"] == "Meanwhile"
    await comm.disconnect()


async def test_anonymous_user_socket_is_closed_4401():
    comm = open_user_socket(None)
    connected, _ = await comm.connect()
    assert connected
    closed = await comm.receive_output(timeout=2)
    assert closed == {"type": "websocket.close", "code": 4401}


async def test_a_list_socket_closes_when_its_token_is_revoked(alice, settings):
    from asgiref.sync import sync_to_async
    from channels.testing import WebsocketCommunicator

    from accounts.tokens import create_api_token, revoke_api_token
    from chatsite.asgi import application

    settings.CHAT_RUN_HEARTBEAT_SECONDS = 0.3
    issued = await sync_to_async(create_api_token)(user=alice, name="list")
    comm = WebsocketCommunicator(
        application, "/ws/user/", headers=[(b"authorization", f"Bearer {issued.secret}".encode())]
    )
    assert (await comm.connect())[0]
    await sync_to_async(revoke_api_token)(user=alice, token_id=issued.token.pk)
    closed = await comm.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4401}
