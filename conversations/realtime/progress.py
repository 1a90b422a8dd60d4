"""The reply in progress, readable from every process: its run, what it answers, its text.

With Redis: `chat:replies:<conversation>` maps each running run (one, or a side-by-side
pair) to what it answers, and `chat:reply-text:<run>` holds its text, which the run
APPENDs once per chunk as it sends the chunk (the trip and the sends go together; the
run's next chunk waits for both), so a `sync` on any process sees every chunk a newly
joined socket might have missed, but for one still on its way: that one the socket is
then sent from the run's text (realtime/positions.py fills the gap). A process killed
mid-reply leaves in Redis all the text its sockets were sent but that last chunk (while
Redis answers within SLOW_TRIP_SECONDS: past that, the reply goes on without it).
Without Redis (one process) a dict does the same.

Every write of a reply in progress but its start (`astart`) waits in one queue per event
loop (`_Trips`) and travels in order, in trips of one command each: chunks of text and
reasoning, and the run forgotten once it ended (`aclear`), after its last chunk.

Redis may go away (a restart loses every key): each append checks the length Redis
answers against the text the run has produced, and writes the whole record again when
they differ, so `sync` never returns a text that does not start at offset 0. While Redis
is unreachable these functions log and carry on: the reply itself never depends on them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple, TypedDict

import orjson
from redis.exceptions import RedisError

from .redis import get_redis

logger = logging.getLogger(__name__)

KEY_TTL_SECONDS = 3600  # refreshed by the run's heartbeat; a dead run's keys outlive it
SLOW_TRIP_SECONDS = 0.25  # a reply waits this long at most for its chunk to reach Redis
# Trips to Redis start at least this far apart: under load the chunks of every reply in
# the process travel together, up to 100 trips a second (a quiet server's first chunk
# after a pause goes at once).
TRIP_GAP_SECONDS = 0.01


class ReplyProgress(TypedDict):
    run_id: str
    reply_to: str
    text: str
    reasoning: str  # the model's reasoning so far ("" for none)
    lane: int  # 1: the second reply of a side-by-side pair
    model: str  # the model named for it ("": the conversation's)


class Append(NamedTuple):
    """One chunk of a run's text, with the whole text up to and including it (a tuple: one
    is made per chunk, a quarter of a frozen dataclass's cost)."""

    run_id: str
    reply_to: str
    text: str
    whole: str
    whole_bytes: int  # len(whole.encode()), kept by the caller so no chunk re-encodes it
    lane: int = 0
    model: str = ""


# Without Redis: conversation → run → its progress; run → its reasoning so far.
_local: dict[str, dict[str, ReplyProgress]] = {}
_local_reasoning: dict[str, str] = {}


def _runs_key(conversation_id: Any) -> str:
    return f"chat:replies:{conversation_id}"  # a hash: run id → what it answers


def _text_key(run_id: Any) -> str:
    return f"chat:reply-text:{run_id}"


def _reasoning_key(run_id: Any) -> str:
    return f"chat:reply-reasoning:{run_id}"


async def _write(conversation_id: Any, append: Append) -> None:
    """Record run `append.run_id` with its whole text so far."""
    client = get_redis()
    if client is None:
        _local.setdefault(str(conversation_id), {})[append.run_id] = {
            "run_id": append.run_id,
            "reply_to": append.reply_to,
            "text": append.whole,
            "reasoning": "",
            "lane": append.lane,
            "model": append.model,
        }
        return
    meta = json.dumps({"reply_to": append.reply_to, "lane": append.lane, "model": append.model})
    async with client.pipeline(transaction=True) as pipe:
        pipe.hset(_runs_key(conversation_id), append.run_id, meta)
        pipe.expire(_runs_key(conversation_id), KEY_TTL_SECONDS)
        pipe.set(_text_key(append.run_id), append.whole, ex=KEY_TTL_SECONDS)
        await pipe.execute()


async def astart(
    *,
    conversation_id: Any,
    run_id: Any,
    reply_to: Any,
    text: str = "",
    lane: int = 0,
    model: str = "",
) -> None:
    """Record that `run_id` is replying to message `reply_to`, with `text` so far (a
    continue starts with the cut-off reply's text); `lane` and `model` side by side."""
    start = Append(str(run_id), str(reply_to), "", text, len(text.encode()), lane, model or "")
    try:
        await _write(conversation_id, start)
    except RedisError as exc:
        logger.warning("reply progress of %s not recorded: %s", run_id, exc)


async def aappend(*, conversation_id: Any, append: Append) -> None:
    """Append one chunk to the reply's text (rewriting the record if Redis lost it);
    return once Redis has it (`record`)."""
    done = asyncio.get_running_loop().create_future()
    record(conversation_id=conversation_id, append=append, then=lambda: _settle(done))
    await done


def record(*, conversation_id: Any, append: Append, then: Callable[[], None] | None = None) -> None:
    """Queue one chunk of a reply's text for the next trip to Redis; call `then` once it
    is there (at once without Redis, where it is recorded already).

    The chunks of every reply in this process that arrive while one trip is under way, or
    within TRIP_GAP_SECONDS of its start, travel together in the next, as one command with
    one argument: a round trip per chunk and reply was once the biggest cost of a process
    streaming many replies, and then the client's work per chunk within a trip (an
    argument, a key and an answer each) was.
    """
    trips = _trips_of_loop()
    if trips is None:
        current = _local.get(str(conversation_id), {}).get(append.run_id)
        if current is not None:
            current["text"] += append.text
        if then is not None:
            then()
        return
    trips.add((_APPEND, str(conversation_id), append), then)


def record_reasoning(*, run_id: Any, text: str) -> None:
    """Queue a chunk of the model's reasoning for the next trip, for a `sync` elsewhere.

    Best effort, unlike the reply's text: reasoning is shown while it streams and stored
    whole on the reply; a chunk lost to a Redis restart only leaves a gap in what a socket
    joining elsewhere sees meanwhile.
    """
    trips = _trips_of_loop()
    if trips is None:
        _local_reasoning[str(run_id)] = _local_reasoning.get(str(run_id), "") + text
        return
    trips.add((_REASONING, "", str(run_id), text), None)


async def aclear(*, conversation_id: Any, run_id: Any) -> None:
    """Forget a finished run, after every chunk of it queued before (the same trips)."""
    trips = _trips_of_loop()
    if trips is None:
        _local.get(str(conversation_id), {}).pop(str(run_id), None)
        if not _local.get(str(conversation_id), True):
            del _local[str(conversation_id)]
        _local_reasoning.pop(str(run_id), None)
        return
    done = asyncio.get_running_loop().create_future()
    trips.add((_CLEAR, str(conversation_id), str(run_id)), lambda: _settle(done))
    await done  # the keys expire on their own if Redis is away


def _settle(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


def _trips_of_loop() -> _Trips | None:
    """Return this loop's trips to Redis (None without Redis)."""
    loop = asyncio.get_running_loop()
    trips = _trips.get(loop)
    if trips is None and get_redis() is not None:
        trips = _trips[loop] = _Trips(loop)
    return trips


_APPEND, _REASONING, _CLEAR = 0, 1, 2
Then = Callable[[], None] | None


class _Trips:
    """What waits for the next trip to Redis, for one event loop, in the order it came:
    reply text, reasoning, and runs to forget (after their text).

    A reply never waits for Redis longer than SLOW_TRIP_SECONDS: a trip still under way
    then (Redis restarting: redis-py retries until it answers) lets its chunks go on, and
    until it ends every new chunk goes on at once, its text appended on the next trip (or
    the whole text written again there, if Redis lost it). The reply's own sockets stream
    through an outage; a socket elsewhere that misses a chunk meanwhile gets a `sync.state`
    once Redis is back (realtime/continuity.py).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiting: list[tuple[Any, ...]] = []
        self.thens: list[Callable[[], None]] = []
        self.sender: asyncio.Task[None] | None = None
        self.slow = False  # a trip outlasted SLOW_TRIP_SECONDS and is still under way
        self.last_trip = float("-inf")  # when the last trip started (loop time)

    def add(self, op: tuple[Any, ...], then: Then) -> None:
        self.waiting.append(op)
        if then is not None:
            if self.slow:
                then()
            else:
                self.thens.append(then)
        if self.sender is None or self.sender.done():
            self.sender = self.loop.create_task(self._send())

    async def _send(self) -> None:
        while self.waiting:
            gap = self.last_trip + TRIP_GAP_SECONDS - self.loop.time()
            if gap > 0:  # more chunks join this trip meanwhile
                await asyncio.sleep(gap)
            self.last_trip = self.loop.time()
            trip, self.waiting = self.waiting, []
            thens, self.thens = self.thens, []
            sent = self.loop.create_task(_travel(trip))
            try:
                await asyncio.wait([sent], timeout=SLOW_TRIP_SECONDS)
                if not sent.done():
                    self.slow = True
                    _call_all(thens)
                    thens = []
                    await asyncio.wait([sent])
                sent.result()
            except RedisError as exc:
                logger.warning("reply progress of %d chunk(s) not recorded: %s", len(trip), exc)
            except Exception:
                logger.exception("reply progress of %d chunk(s) not recorded", len(trip))
            finally:
                self.slow = False
                _call_all(thens)


def _call_all(thens: list[Callable[[], None]]) -> None:
    for then in thens:  # every one, though one of them may raise
        try:
            then()
        except Exception:
            logger.exception("a reply could not go on after its progress was recorded")


# One command per trip, however many chunks it carries: the trip's operations as one JSON
# argument, in order (then the key prefixes and the expiry). Reply text is APPENDed to a
# key that exists only (one a restart emptied is written again whole, never begun with a
# later chunk and no expiry); the answer names the operations whose text must be written
# again (Redis lost it, or its key holds something else). Every command is a `pcall`: one
# Redis refuses (a key of another type, memory full) does not stop the rest of the trip.
_TRIP = """
local ops = cjson.decode(ARGV[1])
local text, reasoning, runs, ttl = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local again = {}
for i, op in ipairs(ops) do
    if op[1] == 0 then
        local key = text .. op[2]
        local length = -1
        if redis.call('EXISTS', key) == 1 then
            length = redis.pcall('APPEND', key, op[3])
        end
        if type(length) ~= 'number' or length ~= op[4] then
            again[#again + 1] = i
        end
    elseif op[1] == 1 then
        redis.pcall('APPEND', reasoning .. op[2], op[3])
        redis.pcall('EXPIRE', reasoning .. op[2], ttl)
    else
        redis.pcall('HDEL', runs .. op[2], op[3])
        redis.pcall('DEL', text .. op[3], reasoning .. op[3])
    end
end
return again
"""
_scripts: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


async def _travel(trip: list[tuple[Any, ...]]) -> None:
    """Carry one trip's operations to Redis; write again in whole each text Redis lost
    (unless its run is forgotten in the same trip)."""
    client = get_redis()
    assert client is not None
    script = _scripts.get(client)
    if script is None:  # redis-py loads it again by itself after a Redis restart
        script = _scripts[client] = client.register_script(_TRIP)
    ops = [
        (op[0], op[2].run_id, op[2].text, op[2].whole_bytes)
        if op[0] == _APPEND
        else (op[0], op[2], op[3])
        if op[0] == _REASONING
        else (op[0], op[1], op[2])
        for op in trip
    ]
    prefixes = [_text_key(""), _reasoning_key(""), _runs_key("")]
    again = await script(keys=[], args=[orjson.dumps(ops), *prefixes, KEY_TTL_SECONDS])
    if not again:
        return
    cleared = {op[2] for op in trip if op[0] == _CLEAR}
    latest: dict[str, tuple[str, Append]] = {}
    for op in trip:  # a text's latest chunk carries its whole
        if op[0] == _APPEND:
            latest[op[2].run_id] = (op[1], op[2])
    for run_id in {trip[i - 1][2].run_id for i in again} - cleared:
        await _write(*latest[run_id])


_trips: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Trips] = weakref.WeakKeyDictionary()


async def atouch(*, runs: list[tuple[str, Any]]) -> None:
    """Keep live runs' keys from expiring (`runs`: (conversation id, run id)), in one trip."""
    client = get_redis()
    if client is None or not runs:
        return
    try:
        async with client.pipeline(transaction=False) as pipe:
            for conversation_id, run_id in runs:
                pipe.expire(_runs_key(conversation_id), KEY_TTL_SECONDS)
                pipe.expire(_text_key(run_id), KEY_TTL_SECONDS)
                pipe.expire(_reasoning_key(run_id), KEY_TTL_SECONDS)
            await pipe.execute()
    except RedisError as exc:
        logger.warning("reply progress of %d run(s) not refreshed: %s", len(runs), exc)


async def aget(*, conversation_id: Any) -> list[ReplyProgress]:
    """Return the replies in progress of a conversation by lane (none when Redis is down)."""
    client = get_redis()
    if client is None:
        found = [
            {**current, "reasoning": _local_reasoning.get(run_id, "")}
            for run_id, current in _local.get(str(conversation_id), {}).items()
        ]
        return sorted(found, key=lambda p: p["lane"])  # type: ignore[return-value]
    try:
        runs = await client.hgetall(_runs_key(conversation_id))
        if not runs:
            return []
        keys = [key for run_id in runs for key in (_text_key(run_id), _reasoning_key(run_id))]
        values = await client.mget(keys)
    except RedisError as exc:
        logger.warning("reply progress of %s unreadable: %s", conversation_id, exc)
        return []
    found: list[ReplyProgress] = []
    for n, (run_id, raw) in enumerate(runs.items()):
        meta = json.loads(raw)
        found.append(
            {
                "run_id": run_id,
                "reply_to": meta["reply_to"],
                "text": values[2 * n] or "",
                "reasoning": values[2 * n + 1] or "",
                "lane": int(meta.get("lane", 0)),
                "model": meta.get("model", ""),
            }
        )
    return sorted(found, key=lambda p: p["lane"])


async def aget_run(*, conversation_id: Any, run_id: Any) -> ReplyProgress | None:
    """Return one reply in progress of a conversation, or None."""
    found = await aget(conversation_id=conversation_id)
    return next((p for p in found if p["run_id"] == str(run_id)), None)
