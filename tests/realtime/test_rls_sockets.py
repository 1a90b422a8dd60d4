"""Row-level security behind the websocket: a socket's events run as its user only."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from conversations.models import Conversation, Message
from tests.conftest import require_service, uses_postgres

from .conftest import make_conversation, make_token, open_socket, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flush_redis")]


@pytest.fixture(autouse=True)
def _postgres():
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")


@database_sync_to_async
def contents(conversation_id):
    rows = Message.objects.filter(conversation_id=conversation_id).order_by("sequence_number")
    return [m.content for m in rows]


async def test_a_socket_whose_access_check_forgets_the_owner_still_gets_nothing(
    alice, bob, fake_agent, monkeypatch
):
    """With the owner filter taken out of the app's access check, Bob's socket to Alice's
    conversation still closes 4404 and writes nothing; his own conversation still works,
    and the reply run stores its reply as Bob."""
    from conversations import selectors

    monkeypatch.setattr(selectors, "owned_by", lambda user: Conversation.objects.all())
    alices = await make_conversation(alice, "alice private")
    token = await make_token(bob)
    comm = open_socket(alices.id, token=token)
    ok, _ = await comm.connect()
    assert ok
    assert (await comm.receive_output(timeout=2))["code"] == 4404
    assert await contents(alices.id) == []

    bobs = await make_conversation(bob, "bob's")
    comm = open_socket(bobs.id, token=token)
    ok, _ = await comm.connect()
    assert ok
    await comm.send_json_to({"type": "message.send", "content": "hello from bob"})
    frames = await receive_until(comm, "generation.finished")
    assert frames[-1]["finish_reason"] == "end_turn"
    assert await contents(bobs.id) == ["hello from bob", "".join(fake_agent.tokens)]
    await comm.disconnect()
