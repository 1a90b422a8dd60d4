"""Usage fixtures: the real agent against the fake model server, API clients, a staff user."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import AsyncClient

from accounts.tokens import create_api_token
from conversations.realtime import ratelimit
from conversations.realtime.hub import aclose_hub
from conversations.realtime.redis import aclose_redis
from tests.conversations.conftest import model  # noqa: F401  (the fake model server)

API = "/api/v1"


class Api:
    """One user's async API client (Bearer token): JSON in, JSON out."""

    def __init__(self, token: str) -> None:
        self.client = AsyncClient()
        self.headers = {"Authorization": f"Bearer {token}"}

    async def get(self, path: str, **params: Any):
        return await self.client.get(API + path, params, headers=self.headers)

    async def post(self, path: str, body: Any = None):
        data = json.dumps(body or {})
        return await self.client.post(
            API + path, data, content_type="application/json", headers=self.headers
        )


async def api_for(user: Any) -> Api:
    token = await sync_to_async(create_api_token)(user=user, name="usage tests")
    return Api(token.secret)


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True, is_superuser=True)


@pytest.fixture(autouse=True)
async def usage_cleanup():
    ratelimit.reset_local_rates()
    yield
    await aclose_hub()
    await aclose_redis()
    await sync_to_async(connections.close_all)()
