"""List sockets (`/ws/user/`) on two Daphne processes sharing a Redis of the test's own.

A user's list frames reach every tab on both processes exactly once, another user's tabs
never; each process holds one channel-layer subscription per user with tabs there, however
many tabs are open (issue 37: one per socket before), and subscribes again after Redis
restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time

import httpx
import pytest
import redis
import websockets
from django.conf import settings
from django.db import connections

from accounts.tokens import create_api_token
from conversations import services
from conversations.models import Conversation
from core.groups import layer_prefix, user_group
from tests.conftest import require_service, uses_postgres
from tests.support.daphne import start_daphnes, stop

pytestmark = pytest.mark.django_db(transaction=True)

TABS = 4  # per user and process
QUIET_SECONDS = 1.5  # after the last expected frame: long enough for a duplicate to show


@pytest.fixture
def two_daphnes(tmp_path, redis_server):
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    procs, ports = start_daphnes(
        tmp_path, "http://127.0.0.1:9/v1", redis_server.url, CHAT_RUN_HEARTBEAT_SECONDS="1"
    )
    try:
        yield ports
    finally:
        stop(procs)


@pytest.fixture
def layer_on(settings, redis_server):
    """Point this test process's channel layer at the test's Redis (a management command's
    frames leave through it)."""
    layers = copy.deepcopy(settings.CHANNEL_LAYERS)
    config = layers["default"]["CONFIG"]
    config["prefix"] = layer_prefix(redis_server.url)
    config["hosts"][0]["address"] = redis_server.url
    settings.CHANNEL_LAYERS = layers


class Subscriptions:
    """What the Daphne processes subscribe to on the test's Redis (nobody else uses it)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.prefix = layer_prefix(url)

    def numsub(self, user_id) -> int:
        channel = f"{self.prefix}__group__{user_group(user_id)}"
        with redis.Redis.from_url(self.url) as client:
            [(_name, count)] = client.pubsub_numsub(channel)
        return int(count)

    def total(self) -> int:
        """Count every subscription of every channel (one process: its own channel + groups)."""
        with redis.Redis.from_url(self.url) as client:
            channels = client.pubsub_channels(f"{self.prefix}*")
            return sum(int(n) for _name, n in client.pubsub_numsub(*channels)) if channels else 0


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _open_tabs(stack, port: int, token: str, count: int) -> list:
    """Open `count` list sockets, each joined (it has answered a ping)."""
    tabs = []
    for _ in range(count):
        ws = await stack.enter_async_context(
            websockets.connect(f"ws://127.0.0.1:{port}/ws/user/", additional_headers=_bearer(token))
        )
        await ws.send(json.dumps({"type": "ping"}))
        assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"type": "pong"}
        tabs.append(ws)
    return tabs


async def _heard(ws, expected: int, wait: float = 15) -> list[dict]:
    """Read `expected` frames (or what came within `wait`), then whatever follows within
    QUIET_SECONDS (a duplicate would)."""
    frames: list[dict] = []
    deadline = time.monotonic() + wait
    with contextlib.suppress(TimeoutError):
        while len(frames) < expected:
            left = deadline - time.monotonic()
            frames.append(json.loads(await asyncio.wait_for(ws.recv(), max(left, 0.01))))
    with contextlib.suppress(TimeoutError):
        while True:
            frames.append(json.loads(await asyncio.wait_for(ws.recv(), QUIET_SECONDS)))
    return frames


async def _everyone_heard(tabs: dict[str, list], expected: int) -> dict[str, list[list[dict]]]:
    """Return, per group of tabs, what each heard ("bob": expecting nothing)."""
    names = list(tabs)
    heard = await asyncio.gather(
        *(
            asyncio.gather(*(_heard(ws, expected if name != "bob" else 0) for ws in tabs[name]))
            for name in names
        )
    )
    return dict(zip(names, heard, strict=True))


async def _settle(read, want: int, seconds: float) -> int:
    """Read `read()` every 0.2 s until it returns `want` or `seconds` passed; return it."""
    for _ in range(int(seconds / 0.2)):
        if read() == want:
            break
        await asyncio.sleep(0.2)
    return read()


def _rename_from_a_command(conversation_id, title: str) -> None:
    """Rename as a management command would: no server loop here, straight to the layer."""
    try:
        services.rename_conversation(
            conversation=Conversation.objects.get(pk=conversation_id), title=title
        )
    finally:
        connections.close_all()


async def _scenario(ports, subs: Subscriptions, redis_server, *, alice, bob, conversation_id):
    a_port, b_port = ports
    out: dict = {}
    async with (
        contextlib.AsyncExitStack() as stack,
        httpx.AsyncClient(timeout=30, headers=_bearer(alice["token"])) as http,
    ):
        first = {
            "a": await _open_tabs(stack, a_port, alice["token"], 1),
            "b": await _open_tabs(stack, b_port, alice["token"], 1),
            "bob": [
                *await _open_tabs(stack, a_port, bob["token"], 1),
                *await _open_tabs(stack, b_port, bob["token"], 1),
            ],
        }
        out["total_with_one_tab_each"] = subs.total()
        tabs = {
            "a": first["a"] + await _open_tabs(stack, a_port, alice["token"], TABS - 1),
            "b": first["b"] + await _open_tabs(stack, b_port, alice["token"], TABS - 1),
            "bob": first["bob"]
            + await _open_tabs(stack, a_port, bob["token"], TABS - 1)
            + await _open_tabs(stack, b_port, bob["token"], TABS - 1),
        }
        out["total_with_all_tabs"] = subs.total()
        out["numsub"] = {"alice": subs.numsub(alice["id"]), "bob": subs.numsub(bob["id"])}

        # Two renames through the API of process A, one after the other.
        api = f"http://127.0.0.1:{a_port}/api/v1/conversations/{conversation_id}"
        for title in ("first", "second"):
            assert (await http.patch(api, json={"title": title})).status_code == 200
        out["api_renames"] = await _everyone_heard(tabs, 2)

        # A management command's rename: through the layer, no process is its origin.
        await asyncio.to_thread(_rename_from_a_command, conversation_id, "from a command")
        out["command_rename"] = await _everyone_heard(tabs, 1)

        # Redis restarts: the watchdog (every second here) subscribes each process again.
        redis_server.stop()
        await asyncio.sleep(2)
        redis_server.start()
        out["numsub_after_restart"] = await _settle(lambda: subs.numsub(alice["id"]), 2, 20)
        await asyncio.sleep(1.5)  # the echo that proves it delivers, and its reset if not
        api_b = f"http://127.0.0.1:{b_port}/api/v1/conversations/{conversation_id}"
        assert (await http.patch(api_b, json={"title": "after the restart"})).status_code == 200
        out["after_restart"] = await _everyone_heard(tabs, 1)

        # Process A's tabs of alice close: A leaves her group, B stays.
        for ws in tabs["a"]:
            await ws.close()
        out["numsub_after_a_closed"] = await _settle(lambda: subs.numsub(alice["id"]), 1, 10)
    return out


def _titles(heard: dict[str, list[list[dict]]]) -> dict[str, list[list[str]]]:
    return {
        name: [
            [f"{f['type']}:{f.get('conversation', {}).get('title')}" for f in frames]
            for frames in per_tab
        ]
        for name, per_tab in heard.items()
    }


def test_list_frames_reach_every_tab_once_through_one_subscription_per_process(
    two_daphnes, redis_server, layer_on, alice, bob
):
    conversation = services.create_conversation(user=alice, title="Plans")
    users = {
        "alice": {"id": alice.pk, "token": create_api_token(user=alice, name="tabs").secret},
        "bob": {"id": bob.pk, "token": create_api_token(user=bob, name="tabs").secret},
    }
    subs = Subscriptions(redis_server.url)
    out = asyncio.run(
        _scenario(two_daphnes, subs, redis_server, **users, conversation_id=str(conversation.pk))
    )

    # One subscription per user and process, whatever the number of tabs: each process
    # holds its own channel and one per user group (4 + 4 sockets more changed nothing).
    assert out["numsub"] == {"alice": 2, "bob": 2}
    assert out["total_with_one_tab_each"] == 2 + 2 * 2
    assert out["total_with_all_tabs"] == out["total_with_one_tab_each"]

    expected = ["conversation.updated:first", "conversation.updated:second"]
    renames = _titles(out["api_renames"])
    assert renames == {"a": [expected] * TABS, "b": [expected] * TABS, "bob": [[]] * 2 * TABS}
    command = _titles(out["command_rename"])
    once = [["conversation.updated:from a command"]]
    assert command == {"a": once * TABS, "b": once * TABS, "bob": [[]] * 2 * TABS}

    assert out["numsub_after_restart"] == 2
    after = _titles(out["after_restart"])
    once = [["conversation.updated:after the restart"]]
    assert after == {"a": once * TABS, "b": once * TABS, "bob": [[]] * 2 * TABS}
    assert out["numsub_after_a_closed"] == 1
