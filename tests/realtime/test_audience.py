"""Token frames are published to other processes only when one listens (Redis NUMSUB)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from django.conf import settings

from conversations.realtime.audience import BATCH_SECONDS
from conversations.realtime.hub import get_hub
from conversations.realtime.redis import get_redis
from core.groups import conversation_group
from tests.conftest import require_service

from .conftest import make_conversation, make_token, open_socket, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flush_redis")]


@pytest.fixture
def redis_layer():
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")


async def test_the_count_tells_this_process_from_another(redis_layer):
    hub, key = get_hub(), str(uuid.uuid4())
    await hub._subscribe(key)
    await hub.audience._read(key)
    assert hub.audience.others_listen(key) is False  # only this process

    other = get_redis().pubsub()  # another process's subscription to the same group
    await other.subscribe(hub.layer._get_group_channel_name(conversation_group(key)))
    try:
        await hub.audience._read(key)
        assert hub.audience.others_listen(key) is True
    finally:
        await other.aclose()


async def test_one_command_reads_the_counts_of_every_conversation_due(redis_layer, monkeypatch):
    hub, keys = get_hub(), [str(uuid.uuid4()) for _ in range(50)]
    for key in keys:
        await hub._subscribe(key)
    client, asked = get_redis(), []
    numsub = client.pubsub_numsub

    async def counted(*channels):
        asked.append(len(channels))
        return await numsub(*channels)

    monkeypatch.setattr(client, "pubsub_numsub", counted)
    assert all(hub.audience.others_listen(key) for key in keys)  # unknown yet: publish
    for _ in range(20):
        await asyncio.sleep(BATCH_SECONDS)
        if asked:
            break
    assert asked == [50]  # not fifty commands
    assert not any(hub.audience.others_listen(key) for key in keys)  # only this process


async def test_unknown_counts_publish(redis_layer):
    hub = get_hub()
    assert hub.audience.others_listen(str(uuid.uuid4())) is True  # not read yet: publish


async def test_a_reply_nobody_else_follows_publishes_no_tokens_but_every_other_frame(
    redis_layer, fake_agent, alice
):
    fake_agent.delay = 0.02
    fake_agent.tokens = [f"w{i} " for i in range(60)]
    token, conversation = await make_token(alice), await make_conversation(alice)
    comm = open_socket(conversation.id, token=token)
    assert (await comm.connect())[0]
    hub = get_hub()
    published: list[dict] = []
    original = hub._publish

    def spy(group, frame, on_sent=None):
        published.append(frame)
        original(group, frame, on_sent)

    hub._publish = spy
    await comm.send_json_to({"type": "message.send", "content": "hello"})
    frames = await receive_until(comm, "generation.finished", wait=10)
    tokens_sent = [f for f in frames if f["type"] == "token"]
    tokens_published = [f for f in published if f.get("type") == "token"]
    assert "".join(f["text"] for f in tokens_sent) == "".join(fake_agent.tokens)
    # Published only until the count was read (a millisecond): none in the second half.
    middle = tokens_sent[len(tokens_sent) // 2]["index"]
    assert all(f["index"] < middle for f in tokens_published)
    others = [f["type"] for f in published if f.get("type") != "token"]
    assert "generation.started" in others and "generation.finished" in others
    await comm.disconnect()
