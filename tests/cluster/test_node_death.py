"""kill -9 of the process running a reply, behind HAProxy, with watchers on every process.

Six sockets through the proxy (round robin: two per process) watch one conversation; one
of them asks for a long reply. Mid-reply the process running it is killed with SIGKILL.
The sockets on the other processes must see the reply finish as `interrupted` within the
stale window without doing anything; the sockets that were on the dead process reconnect
through the proxy and `sync`, and must end with the same stored text — the live chunks
contiguous by `index`, nothing missing, nothing twice. Then a new message through the
proxy gets its reply. Run last (files run in name order): the killed process stays dead.
"""

from __future__ import annotations

import asyncio
import json
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

import pytest
import websockets
from asgiref.sync import sync_to_async

from accounts.tokens import create_api_token
from conversations import services
from conversations.models import Message, ReplyRun
from tests.cluster.conftest import HEARTBEAT_SECONDS, LONG_REPLY, STALE_SECONDS
from tests.support.sockets import frames_until

pytestmark = pytest.mark.django_db(transaction=True)

SOCKETS = 6
# The watchdog looks every HEARTBEAT_SECONDS; a run is stale STALE_SECONDS after its last
# beat, which was up to one beat before the kill; then a frame crosses Redis.
ANNOUNCE_WITHIN = STALE_SECONDS + 2 * HEARTBEAT_SECONDS + 1.5


@dataclass
class Watcher:
    """A client as docs/websocket-protocol.md asks: messages by id, each run's text so far."""

    messages: dict[str, dict] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)
    synced: bool = True  # False between a reconnect and its sync.state
    faults: list[str] = field(default_factory=list)  # gaps and repeats in the chunks
    outcome: str = ""
    waited: float = 0.0  # kill → the reply's end reached this client
    reconnect: float = 0.0  # kill → the new socket's sync.state

    def apply(self, frame: dict) -> None:
        kind = frame["type"]
        if kind in ("message.created", "generation.finished"):
            self.messages[frame["message"]["id"]] = frame["message"]
        elif kind == "sync.state":
            self.synced = True
            for message in frame["messages"]:
                self.messages[message["id"]] = message
            if frame["generation"]:
                self.text[frame["generation"]["run_id"]] = frame["generation"]["text"]
        elif kind == "token" and self.synced:  # chunks before the sync.state are stale
            text = self.text.get(frame["run_id"], "")
            if frame["index"] != len(text):
                what = "gap" if frame["index"] > len(text) else "repeat"
                self.faults.append(f"{what}: text {len(text)}, chunk at {frame['index']}")
            self.text[frame["run_id"]] = text[: frame["index"]] + frame["text"]

    def last_seq(self) -> int:
        return max((m["sequence_number"] for m in self.messages.values()), default=0)


async def _follow(ws, client: Watcher, run_id: str, ws_url: str, headers, killed_at) -> None:
    """Read until the reply is stored; on a dropped socket, reconnect through the proxy."""
    try:
        while run_id not in client.messages:
            client.apply(json.loads(await ws.recv()))
        client.outcome, client.waited = "stayed", time.monotonic() - killed_at
        return
    except websockets.ConnectionClosed:
        pass
    client.synced = False
    async with websockets.connect(ws_url, additional_headers=headers) as again:
        await again.send(json.dumps({"type": "sync", "after": client.last_seq()}))
        for frame in await frames_until(again, "sync.state", wait=10):
            client.apply(frame)
        client.reconnect = time.monotonic() - killed_at
        while run_id not in client.messages:
            client.apply(json.loads(await again.recv()))
    client.outcome, client.waited = "reconnected", time.monotonic() - killed_at


def _running_run(conversation_id) -> ReplyRun:
    return ReplyRun.objects.get(conversation_id=conversation_id, status="running")


async def _kill_mid_reply(cluster, conversation_id, token) -> dict:
    ws_url = f"{cluster.url.replace('http', 'ws', 1)}/ws/conversations/{conversation_id}/"
    headers = {"Authorization": f"Bearer {token}"}
    clients = [Watcher() for _ in range(SOCKETS)]
    out: dict = {"clients": clients}
    async with AsyncExitStack() as stack:
        sockets = []
        for _ in clients:  # one after another, so round robin puts two on each process
            ws = await stack.enter_async_context(
                websockets.connect(ws_url, additional_headers=headers)
            )
            await ws.send(json.dumps({"type": "ping"}))
            assert json.loads(await ws.recv()) == {"type": "pong"}
            sockets.append(ws)
        # HAProxy names the process behind each socket (deploy/haproxy.cfg: X-Served-By).
        out["served_by"] = [ws.response.headers["X-Served-By"] for ws in sockets]
        await sockets[0].send(json.dumps({"type": "message.send", "content": "slowly, please"}))
        for client, ws in zip(clients, sockets, strict=True):
            for frame in await frames_until(ws, "token"):
                client.apply(frame)
        for _ in range(10):  # let it write a little more
            clients[0].apply(json.loads(await sockets[0].recv()))
        run = await sync_to_async(_running_run)(conversation_id)
        out["victim"] = victim = cluster.node_of(run.owner)
        victim.proc.kill()
        killed_at = time.monotonic()
        cluster.killed.append(victim.name)
        await asyncio.wait_for(
            asyncio.gather(
                *(
                    _follow(ws, client, str(run.pk), ws_url, headers, killed_at)
                    for client, ws in zip(clients, sockets, strict=True)
                )
            ),
            timeout=30,
        )
        out["run_id"] = str(run.pk)
        async with websockets.connect(ws_url, additional_headers=headers) as fresh:
            await fresh.send(json.dumps({"type": "message.send", "content": "and now?"}))
            out["after"] = (await frames_until(fresh, "generation.finished", wait=20))[-1]
    return out


def test_killing_the_process_of_a_reply_loses_no_text_and_the_cluster_goes_on(cluster, alice):
    token = create_api_token(user=alice, name="ws").secret
    conversation = services.create_conversation(user=alice, title="A node dies")

    out = asyncio.run(_kill_mid_reply(cluster, conversation.id, token))

    served_by, victim = out["served_by"], out["victim"]
    assert sorted(served_by) == ["a", "a", "b", "b", "c", "c"]  # round robin, two each
    clients: list[Watcher] = out["clients"]
    stored = Message.objects.get(pk=out["run_id"])
    assert stored.finish_reason == "interrupted"
    assert stored.content and LONG_REPLY.startswith(stored.content)
    assert len(stored.content) < len(LONG_REPLY)  # really cut off mid-reply
    for client, name in zip(clients, served_by, strict=True):  # only the victim's reconnect
        assert client.outcome == ("reconnected" if name == victim.name else "stayed")
    for client in clients:
        assert client.faults == []
        message = client.messages[out["run_id"]]
        assert message["content"] == stored.content  # the exact text, on every client
        assert message["finish_reason"] == "interrupted"
        live = client.text.get(out["run_id"], "")
        assert stored.content.startswith(live)  # what it streamed is what was kept
        if client.outcome == "stayed":  # announced without the client asking
            assert client.waited < ANNOUNCE_WITHIN, f"{client.waited:.1f} s"

    assert out["after"]["finish_reason"] == "end_turn"
    assert Message.objects.filter(conversation=conversation).count() == 4
    logs = "".join(p.read_text() for p in cluster.logs.glob("*/daphne-*.log"))
    # One process won the recovery (the folder's clusters share a log folder: this run's only).
    assert logs.count(f"reply {out['run_id']}: its process died; stored as interrupted") == 1
    waits = sorted(round(c.waited, 2) for c in clients if c.outcome == "stayed")
    reconnects = sorted(round(c.reconnect, 2) for c in clients if c.outcome == "reconnected")
    print(f"\nkill -9: announced after {waits} s; reconnected + synced after {reconnects} s")
