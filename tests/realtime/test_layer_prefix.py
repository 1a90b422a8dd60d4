"""Two sites on one Redis server, each in its own database, never hear each other's groups."""

from __future__ import annotations

import asyncio
import os

from channels_redis.pubsub import RedisPubSubChannelLayer

from core.groups import layer_prefix, user_group
from tests.conftest import require_service

REDIS = os.environ.get("REDIS_URL", "")


def test_the_prefix_names_the_database():
    assert layer_prefix("redis://127.0.0.1:6379/7") == "chat7"
    assert layer_prefix("redis://127.0.0.1:6379") == "chat0"
    assert layer_prefix("rediss://user:secret@host:6380/12?ssl_cert_reqs=none") == "chat12"


def _layer(url: str) -> RedisPubSubChannelLayer:
    return RedisPubSubChannelLayer(hosts=[{"address": url}], prefix=layer_prefix(url))


async def _heard(listener: RedisPubSubChannelLayer, speaker: RedisPubSubChannelLayer) -> bool:
    group = user_group(1)  # every site has a first user
    channel = await listener.new_channel()
    await listener.group_add(group, channel)
    try:
        await asyncio.sleep(0.2)  # the subscription is live
        await speaker.group_send(group, {"type": "conversation.updated", "n": 1})
        await asyncio.wait_for(listener.receive(channel), timeout=1.0)
        return True
    except TimeoutError:
        return False
    finally:
        await listener.group_discard(group, channel)


async def test_a_site_in_another_redis_database_does_not_hear_our_groups():
    require_service(REDIS.startswith("redis"), "Redis (set REDIS_URL)")
    base = REDIS.rsplit("/", 1)[0] if REDIS.count("/") > 2 else REDIS
    ours, theirs, same = _layer(f"{base}/5"), _layer(f"{base}/6"), _layer(f"{base}/5")
    try:
        assert await _heard(ours, same)  # the mechanism: one database hears itself
        assert not await _heard(ours, theirs)
    finally:
        for layer in (ours, theirs, same):
            await layer.flush()
