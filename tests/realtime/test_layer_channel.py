"""A process hears the channel layer through one channel and one receiver."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from django.conf import settings

from conversations.realtime.hub import get_hub
from tests.conftest import require_service

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flush_redis")]


def _receivers() -> list[asyncio.Task]:
    return [
        task
        for task in asyncio.all_tasks()
        if not task.done() and task.get_coro().__qualname__.endswith("._receive")
    ]


async def test_subscriptions_made_at_once_share_one_channel_and_receiver():
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    hub, keys = get_hub(), [str(uuid.uuid4()) for _ in range(20)]

    await asyncio.gather(*(hub._subscribe(key) for key in keys))

    assert all(hub.is_subscribed(key) for key in keys)
    assert len(_receivers()) == 1  # before: one per subscription made at the same moment
