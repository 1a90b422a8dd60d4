"""The connection budget of one process (docs/deployment.md).

Fifty people at once on one process — each streams replies over a socket, reads their
lists over HTTP and deletes the conversation at the end — while a sampler counts, many
times a second, the connections PostgreSQL (`pg_stat_activity`, by the client ports of
this process's connections) and Redis (`CLIENT LIST`, likewise) hold for that process.
Neither count may pass the budget: Django's pool (DB_POOL_SIZE) plus the checkpointer's
(agent/checkpoint.py POOL_MAX_SIZE) for PostgreSQL; REDIS_MAX_CONNECTIONS per client for
Redis.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest
import redis
import websockets
from django.conf import settings

from accounts.tokens import create_api_token
from agent import checkpoint
from conversations import services
from conversations.realtime import redis as app_redis
from core import health
from tests.cluster.conftest import REDIS_MAX_CONNECTIONS, tcp_ports
from tests.conftest import database_url_for_subprocesses
from tests.support.sockets import frames_until

pytestmark = pytest.mark.django_db(transaction=True)

PEOPLE = 50
ROUNDS = 2
LOAD_LIMIT = 90.0  # seconds: the whole load is bounded
SAMPLE_EVERY = 0.05
# Seen in use by the channel layer: its subscription, the publisher, subscriber counts.
LAYER_CONNECTIONS = 8


class Sampler(threading.Thread):
    """Count one process's PostgreSQL and Redis connections until stopped; keep the peaks."""

    def __init__(self, node, redis_url: str) -> None:
        super().__init__(daemon=True)
        self.node = node
        self.redis_url = redis_url  # the cluster's own Redis
        self.stopped = threading.Event()
        self.samples = 0
        self.peak: Counter[str] = Counter()

    def run(self) -> None:
        admin = database_url_for_subprocesses().rsplit("/", 1)[0] + "/postgres"
        redis_port = urlsplit(self.redis_url).port or 6379
        counts = redis.Redis.from_url(self.redis_url)
        query = (
            "SELECT count(*), count(*) FILTER (WHERE application_name = %s)"
            " FROM pg_stat_activity WHERE client_port = ANY(%s)"
        )
        deadline = time.monotonic() + LOAD_LIMIT + 30
        with psycopg.connect(admin, autocommit=True) as conn:
            while not self.stopped.is_set() and time.monotonic() < deadline:
                ports = list(self.node.database.upstream_ports())
                row = conn.execute(query, (checkpoint.APPLICATION_NAME, ports)).fetchone()
                mine = tcp_ports(self.node.proc.pid, redis_port)
                held = [c for c in counts.client_list() if int(c["addr"].rsplit(":", 1)[1]) in mine]
                names = Counter(c["name"] for c in held)
                self._keep(postgres=row[0], checkpoints=row[1], redis=len(held), **names)
                time.sleep(SAMPLE_EVERY)

    def _keep(self, **now: int) -> None:
        self.samples += 1
        for name, value in now.items():
            self.peak[name] = max(self.peak[name], value)


async def _person(port: int, conversation_id, headers: dict, seen: dict) -> None:
    ws_url = f"ws://127.0.0.1:{port}/ws/conversations/{conversation_id}/"
    base = f"http://127.0.0.1:{port}/api/v1/conversations"
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        async with websockets.connect(ws_url, additional_headers=headers) as ws:
            for _ in range(ROUNDS):
                await ws.send(json.dumps({"type": "message.send", "content": "hello"}))
                finished = (await frames_until(ws, "generation.finished", wait=60))[-1]
                seen["replies"].append(finished["finish_reason"])
                for url in (base, f"{base}/{conversation_id}/messages"):
                    seen["http"].append((await http.get(url)).status_code)
        seen["http"].append((await http.delete(f"{base}/{conversation_id}")).status_code)


async def _load(port: int, conversation_ids: list, token: str) -> dict:
    seen: dict = {"replies": [], "http": []}
    headers = {"Authorization": f"Bearer {token}"}
    people = [_person(port, cid, headers, seen) for cid in conversation_ids]
    started = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*people), timeout=LOAD_LIMIT)
    seen["took"] = time.monotonic() - started
    return seen


def test_one_process_under_load_stays_within_its_connection_budget(cluster, alice):
    node = cluster.alive()[0]
    token = create_api_token(user=alice, name="load").secret
    ids = [services.create_conversation(user=alice, title=f"Load {i}").id for i in range(PEOPLE)]
    sampler = Sampler(node, cluster.redis.url)
    sampler.start()
    try:
        seen = asyncio.run(_load(node.port, ids, token))
    finally:
        sampler.stopped.set()
        sampler.join(timeout=10)

    assert seen["replies"] == ["end_turn"] * PEOPLE * ROUNDS  # the load was served…
    assert sorted(set(seen["http"])) == [200, 204]
    pool = settings.DATABASES["default"]["OPTIONS"]["pool"]["max_size"]
    peak = sampler.peak
    print(f"\nbudget: {sampler.samples} samples in {seen['took']:.1f} s, peaks {dict(peak)}")
    assert sampler.samples > 20
    # PostgreSQL: Django's pool and the checkpointer's, nothing else (deleting a
    # conversation once opened a pool of its own each: 40 here).
    assert peak["postgres"] <= pool + checkpoint.POOL_MAX_SIZE
    assert peak["checkpoints"] <= checkpoint.POOL_MAX_SIZE
    # Redis: the app's client reached its ceiling and waited there; the channel layer
    # publishes one group at a time and holds a handful; the health check its two.
    assert peak[app_redis.CLIENT_NAME] == REDIS_MAX_CONNECTIONS
    assert peak["chat-layer"] <= LAYER_CONNECTIONS
    assert peak["chat-health"] <= health.REDIS_CONNECTIONS
    assert peak["redis"] <= REDIS_MAX_CONNECTIONS + LAYER_CONNECTIONS + health.REDIS_CONNECTIONS
