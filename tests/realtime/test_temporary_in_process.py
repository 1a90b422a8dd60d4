"""A temporary conversation in one process without Redis (the embedded mode): deleted once
its last socket has been closed for the grace period, kept while one is open or comes back."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async

from conversations import services
from conversations.models import Conversation

from .conftest import make_token, open_socket

pytestmark = pytest.mark.django_db(transaction=True)
GRACE = 0.3


@pytest.fixture(autouse=True)
def one_process(settings):
    settings.REDIS_URL = ""  # sockets are counted in this process
    settings.CHAT_TEMPORARY_GRACE_SECONDS = GRACE


@sync_to_async
def _temporary(user):
    return services.create_conversation(user=user, title="Off the record", temporary=True)


async def _exists(conversation) -> bool:
    return await Conversation.objects.filter(pk=conversation.pk).aexists()


async def _open(conversation, token):
    comm = open_socket(conversation.id, token=token)
    connected, _ = await comm.connect()
    assert connected
    await comm.send_json_to({"type": "ping"})
    assert (await comm.receive_json_from())["type"] == "pong"
    return comm


async def test_closing_the_last_socket_deletes_it_after_the_grace(alice):
    conversation, token = await _temporary(alice), await make_token(alice)
    first, second = await _open(conversation, token), await _open(conversation, token)
    await first.disconnect()
    await asyncio.sleep(GRACE * 3)
    assert await _exists(conversation)  # one socket is still open
    await second.disconnect()
    await asyncio.sleep(GRACE / 3)
    assert await _exists(conversation)  # within the grace
    await asyncio.sleep(GRACE * 3)
    assert not await _exists(conversation)


async def test_a_socket_opened_within_the_grace_keeps_it(alice):
    conversation, token = await _temporary(alice), await make_token(alice)
    await (await _open(conversation, token)).disconnect()
    await asyncio.sleep(GRACE / 3)
    again = await _open(conversation, token)  # a reload
    await asyncio.sleep(GRACE * 3)
    assert await _exists(conversation)
    await again.disconnect()
    await asyncio.sleep(GRACE * 3)
    assert not await _exists(conversation)


async def test_a_kept_conversation_stays_when_its_socket_closes(alice):
    conversation = await sync_to_async(services.create_conversation)(user=alice, title="Kept")
    await (await _open(conversation, await make_token(alice))).disconnect()
    await asyncio.sleep(GRACE * 3)
    assert await _exists(conversation)


async def test_another_users_socket_neither_opens_nor_keeps_it(alice, bob):
    conversation = await _temporary(alice)
    stranger = open_socket(conversation.id, token=await make_token(bob))
    await stranger.connect()
    assert (await stranger.receive_output())["code"] == 4404
    await (await _open(conversation, await make_token(alice))).disconnect()
    await asyncio.sleep(GRACE * 3)
    assert not await _exists(conversation)
