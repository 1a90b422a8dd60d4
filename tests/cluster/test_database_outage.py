"""PostgreSQL out of reach of the whole cluster, then back, through HAProxy.

Every process's /healthz fails at once, so HAProxy takes them all out of rotation; the
config's backup lines keep sending requests to them, and clients get the app's own 503
`unavailable` (not HAProxy's page) the whole time. When the database is back, the same
processes answer again with nobody restarting anything.
"""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
import websockets

from accounts.tokens import create_api_token
from tests.support.sockets import frames_until

pytestmark = pytest.mark.django_db(transaction=True)

QUICK = 5.0  # seconds for a 503: DB_POOL_TIMEOUT is 3, 0.5 once the outage is known
OUTAGE_LIMIT = 20.0  # bound on the loop that waits for HAProxy to mark every process down


def _marked(cluster, names, state: str, since: int) -> bool:
    log = cluster.haproxy_log.read_text()[since:]
    return all(f"Server daphne/{name} is {state}" in log for name in names)


async def _outage(cluster, token: str) -> dict:
    headers = {"Authorization": f"Bearer {token}"}
    names = [node.name for node in cluster.alive()]
    out: dict = {"during": []}
    async with httpx.AsyncClient(base_url=cluster.url, headers=headers, timeout=30) as http:
        assert (await http.get("/api/v1/conversations")).status_code == 200
        cut_at = len(cluster.haproxy_log.read_text())
        for node in cluster.nodes:
            node.database.stop()
        started, extra = time.monotonic(), 3  # go on a few requests past "all marked down"
        while extra:
            asked = time.monotonic()
            answer = await http.get("/api/v1/conversations")
            out["during"].append((answer, time.monotonic() - asked))
            if _marked(cluster, names, "DOWN", cut_at):
                extra -= 1
            assert time.monotonic() - started < OUTAGE_LIMIT, "HAProxy never marked them down"
            await asyncio.sleep(0.25)
        out["all_down"] = _marked(cluster, names, "DOWN", cut_at)

        back_at = len(cluster.haproxy_log.read_text())
        for node in cluster.nodes:
            node.database.start()
        restored = time.monotonic()
        while (await http.get("/api/v1/conversations")).status_code != 200:
            assert time.monotonic() - restored < 15, "the cluster did not recover"
            await asyncio.sleep(0.2)
        out["recovered_after"] = time.monotonic() - restored
        while not _marked(cluster, names, "UP", back_at):  # back in rotation
            assert time.monotonic() - restored < 20, "HAProxy did not take them back"
            await asyncio.sleep(0.2)
        conversation = (await http.post("/api/v1/conversations", json={"title": "After"})).json()
    ws_url = f"{cluster.url.replace('http', 'ws', 1)}/ws/conversations/{conversation['id']}/"
    async with websockets.connect(ws_url, additional_headers=headers) as ws:
        await ws.send(json.dumps({"type": "message.send", "content": "still there?"}))
        out["reply"] = (await frames_until(ws, "generation.finished", wait=20))[-1]
    return out


def test_postgresql_out_of_reach_gives_503_through_haproxy_then_the_cluster_recovers(
    cluster, alice
):
    token = create_api_token(user=alice, name="api").secret

    out = asyncio.run(_outage(cluster, token))

    assert out["all_down"]  # HAProxy's checks saw the outage on every process…
    for answer, took in out["during"]:  # …and every request still got the app's answer
        assert answer.status_code == 503 and took < QUICK, (answer.status_code, took)
        assert answer.json()["error"]["code"] == "unavailable"
        assert answer.headers["Retry-After"]
    assert out["recovered_after"] < 10
    assert out["reply"]["finish_reason"] == "end_turn"
    print(f"\noutage: {len(out['during'])} answers 503; recovered {out['recovered_after']:.1f} s")
