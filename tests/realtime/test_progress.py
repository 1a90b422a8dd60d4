"""The reply in progress, as every process reads it: whole and in order, also when Redis
lost it, with the appends of many replies sharing trips to Redis."""

from __future__ import annotations

import asyncio
import uuid

from django.conf import settings

from conversations.realtime import progress
from conversations.realtime.progress import Append
from conversations.realtime.redis import get_redis
from tests.conftest import require_service


class Reply:
    """One reply being written the way the hub writes it: a chunk at a time, in order."""

    def __init__(self) -> None:
        self.conversation_id = str(uuid.uuid4())
        self.run_id = str(uuid.uuid4())
        self.reply_to = str(uuid.uuid4())
        self.text = ""

    async def start(self) -> None:
        await progress.astart(
            conversation_id=self.conversation_id, run_id=self.run_id, reply_to=self.reply_to
        )

    async def append(self, chunk: str) -> None:
        self.text += chunk
        append = Append(self.run_id, self.reply_to, chunk, self.text, len(self.text.encode()))
        await progress.aappend(conversation_id=self.conversation_id, append=append)

    async def stored_text(self) -> str | None:
        found = await progress.aget(conversation_id=self.conversation_id)
        assert [p["run_id"] for p in found] in ([], [self.run_id])
        return found[0]["text"] if found else None


async def test_many_replies_written_at_once_each_keep_exactly_their_text(flush_redis):
    replies = [Reply() for _ in range(40)]
    for reply in replies:
        await reply.start()

    async def write(reply: Reply, n: int) -> None:
        for k in range(25):
            await reply.append(f"{n}:{k} 한국어 ")

    await asyncio.gather(*(write(reply, n) for n, reply in enumerate(replies)))
    for n, reply in enumerate(replies):
        assert await reply.stored_text() == "".join(f"{n}:{k} 한국어 " for k in range(25))


async def test_a_text_redis_lost_is_written_again_whole_with_the_next_chunk(flush_redis):
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    reply = Reply()
    await reply.start()
    await reply.append("first ")
    await reply.append("second ")
    await get_redis().flushdb()  # what a Redis restart leaves: no keys,
    await get_redis().script_flush()  # and no scripts (the appends' own included)
    assert await reply.stored_text() is None
    await reply.append("third")
    assert await reply.stored_text() == "first second third"


async def test_a_text_whose_key_holds_something_else_is_written_again(flush_redis):
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    reply, other = Reply(), Reply()
    await reply.start()
    await other.start()
    await reply.append("kept ")
    await get_redis().delete(f"chat:reply-text:{reply.run_id}")
    await get_redis().lpush(f"chat:reply-text:{reply.run_id}", "not a text")
    # Both chunks travel in one trip; the one whose APPEND Redis refuses is written whole.
    await asyncio.gather(reply.append("and more"), other.append("untouched"))
    assert await reply.stored_text() == "kept and more"
    assert await other.stored_text() == "untouched"


async def test_a_chunk_reaches_the_sockets_while_its_append_is_on_the_way(flush_redis, monkeypatch):
    """The trip to Redis and the sends go together: a slow trip delays neither the reply's
    sockets nor what the trip records; the run's next chunk waits for both."""
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    from conversations import events
    from conversations.realtime.hub import get_hub

    real, trips = progress._travel, []

    async def slow_trip(ops):
        trips.append(asyncio.get_running_loop().time())
        await asyncio.sleep(0.2)  # under SLOW_TRIP_SECONDS: the chunk is still waited for
        await real(ops)

    monkeypatch.setattr(progress, "_travel", slow_trip)
    received: list[tuple[float, str]] = []

    class Socket:
        async def deliver(self, text: str, frame_type: str) -> None:
            received.append((asyncio.get_running_loop().time(), frame_type))

    reply, sock, hub = Reply(), Socket(), get_hub()
    await reply.start()
    hub.enter(reply.conversation_id, sock)
    sent = asyncio.get_running_loop().create_future()
    reply.text = "첫 조각 "
    frame = events.token(run_id=reply.run_id, index=0, text=reply.text)
    append = Append(reply.run_id, reply.reply_to, reply.text, reply.text, len(reply.text.encode()))
    posted = asyncio.get_running_loop().time()
    hub.post(reply.conversation_id, frame, append=append, on_sent=lambda: sent.set_result(None))
    await asyncio.wait_for(sent, 5)
    done = asyncio.get_running_loop().time()
    await hub.leave(reply.conversation_id, sock)
    assert [kind for _, kind in received] == ["token"]
    assert received[0][0] - posted < 0.1  # not after the 0.2 s trip
    assert trips and done - posted >= 0.2  # the item waited for its trip
    assert await reply.stored_text() == "첫 조각 "


async def test_a_finished_run_is_forgotten_after_its_text_and_never_written_again(flush_redis):
    """The run's last chunks and its clear travel in order in one trip; a text Redis lost
    meanwhile is not written again for a run forgotten in that trip (no ghost reply)."""
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    reply = Reply()
    await reply.start()
    await reply.append("first ")
    await get_redis().flushdb()  # Redis restarted: the next chunk finds no text
    trips_before = len(progress._trips[asyncio.get_running_loop()].waiting)
    reply.text += "last"
    append = Append(reply.run_id, reply.reply_to, "last", reply.text, len(reply.text.encode()))
    progress.record(conversation_id=reply.conversation_id, append=append)
    progress.record_reasoning(run_id=reply.run_id, text="thought")
    await progress.aclear(conversation_id=reply.conversation_id, run_id=reply.run_id)
    assert trips_before == 0
    assert await progress.aget(conversation_id=reply.conversation_id) == []
    assert await get_redis().keys("chat:*") == []


async def test_reasoning_travels_with_the_text_and_is_read_back(flush_redis):
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    reply = Reply()
    await reply.start()
    progress.record_reasoning(run_id=reply.run_id, text="생각 ")
    progress.record_reasoning(run_id=reply.run_id, text="more")
    await reply.append("answer")
    found = await progress.aget(conversation_id=reply.conversation_id)
    assert (found[0]["text"], found[0]["reasoning"]) == ("answer", "생각 more")
    assert 0 < await get_redis().ttl(f"chat:reply-reasoning:{reply.run_id}") <= 3600


async def test_a_long_reply_keeps_its_reasoning_as_long_as_its_text(flush_redis):
    """The watchdog's refresh reaches the reasoning too: a reply that thought for a minute
    and then wrote for an hour still shows its reasoning to a tab that syncs late."""
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    reply = Reply()
    await reply.start()
    progress.record_reasoning(run_id=reply.run_id, text="생각")
    await reply.append("answer")
    client = get_redis()
    keys = [f"chat:reply-text:{reply.run_id}", f"chat:reply-reasoning:{reply.run_id}"]
    for key in keys:  # as if written most of an hour ago
        await client.expire(key, 5)
    await progress.atouch(runs=[(reply.conversation_id, reply.run_id)])
    assert [await client.ttl(key) > 5 for key in keys] == [True, True]


async def test_a_write_redis_refuses_does_not_stop_the_rest_of_its_trip(flush_redis, monkeypatch):
    """A reasoning key holding something else is refused; the reply text and the other
    run's end travelling in the same trip still land."""
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    thinking, other = Reply(), Reply()
    await thinking.start()
    await other.start()
    await get_redis().lpush(f"chat:reply-reasoning:{thinking.run_id}", "not a text")
    monkeypatch.setattr(progress, "TRIP_GAP_SECONDS", 0.3)
    await thinking.append("kept ")  # a trip now: the next one leaves 0.3 s after it
    trips = progress._trips[asyncio.get_running_loop()]
    progress.record_reasoning(run_id=thinking.run_id, text="refused")
    await asyncio.sleep(0)
    await asyncio.gather(
        thinking.append("and more"),
        progress.aclear(conversation_id=other.conversation_id, run_id=other.run_id),
        _waiting(trips, 3),
    )
    assert await thinking.stored_text() == "kept and more"
    assert await progress.aget(conversation_id=other.conversation_id) == []


async def _waiting(trips, n: int) -> None:
    """Check that `n` operations wait for one trip together (while it has not left)."""
    await asyncio.sleep(0.05)
    assert len(trips.waiting) == n
