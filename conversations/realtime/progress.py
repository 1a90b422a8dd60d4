"""The reply in progress, readable from every process: its run, what it answers, its text.

With Redis: `chat:replies:<conversation>` maps each running run (one, or a side-by-side
pair) to what it answers, and `chat:reply-text:<run>` holds its text, which the run
APPENDs once per chunk as it sends the chunk (the trip and the sends go together; the
run's next chunk waits for both), so a `sync` on any process sees
every chunk a newly joined socket might have missed, but for one still on its way: that
one the socket is then sent from the run's text (realtime/positions.py fills the gap).
Without Redis (one process) a dict does the same.

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
from dataclasses import dataclass
from typing import Any, TypedDict

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


@dataclass(frozen=True)
class Append:
    """One chunk of a run's text, with the whole text up to and including it."""

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
    return once Redis has it (`append_soon`)."""
    pending = append_soon(conversation_id=conversation_id, append=append)
    if pending is not None:
        await pending


def append_soon(*, conversation_id: Any, append: Append) -> asyncio.Future[None] | None:
    """Queue one chunk for the next trip to Redis; return what resolves once it is there
    (None: without Redis it is recorded already).

    Appends of every reply in this process that arrive while one trip is under way, or
    within TRIP_GAP_SECONDS of its start, travel together in the next (one command): with
    many replies streaming, a round trip per chunk and reply was the biggest cost of the
    process.
    """
    loop = asyncio.get_running_loop()
    batch = _batches.get(loop)  # a loop has one only with Redis (asked once, not per chunk)
    if batch is None:
        if get_redis() is None:
            current = _local.get(str(conversation_id), {}).get(append.run_id)
            if current is not None:
                current["text"] += append.text
            return None
        batch = _batches[loop] = _AppendBatch(loop)
    return batch.add(str(conversation_id), append)


class _AppendBatch:
    """The appends waiting for the next trip to Redis, for one event loop.

    A reply never waits for Redis longer than SLOW_TRIP_SECONDS: a trip still under way
    then (Redis restarting: redis-py retries until it answers) lets its chunks go on, and
    until it ends every new chunk goes on at once, its text appended on the next trip (or
    the whole text written again there, if Redis lost it). The reply's own sockets stream
    through an outage; a socket elsewhere that misses a chunk meanwhile gets a `sync.state`
    once Redis is back (realtime/continuity.py).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiting: list[tuple[str, Append, asyncio.Future[None]]] = []
        self.sender: asyncio.Task[None] | None = None
        self.slow = False  # a trip outlasted SLOW_TRIP_SECONDS and is still under way
        self.last_trip = float("-inf")  # when the last trip started (loop time)

    def add(self, conversation_id: str, append: Append) -> asyncio.Future[None]:
        done: asyncio.Future[None] = self.loop.create_future()
        if self.slow:
            done.set_result(None)
        self.waiting.append((conversation_id, append, done))
        if self.sender is None or self.sender.done():
            self.sender = self.loop.create_task(self._send())
        return done

    async def _send(self) -> None:
        while self.waiting:
            gap = self.last_trip + TRIP_GAP_SECONDS - self.loop.time()
            if gap > 0:  # more chunks join this trip meanwhile
                await asyncio.sleep(gap)
            self.last_trip = self.loop.time()
            trip, self.waiting = self.waiting, []
            sent = self.loop.create_task(_append_all([(c, a) for c, a, _ in trip]))
            try:
                await asyncio.wait([sent], timeout=SLOW_TRIP_SECONDS)
                if not sent.done():
                    self.slow = True
                    _resolve(trip)
                    await asyncio.wait([sent])
                sent.result()
            except RedisError as exc:
                logger.warning("reply progress of %d chunk(s) not recorded: %s", len(trip), exc)
            except Exception:
                logger.exception("reply progress of %d chunk(s) not recorded", len(trip))
            finally:
                self.slow = False
                _resolve(trip)


def _resolve(trip: list[tuple[str, Append, asyncio.Future[None]]]) -> None:
    for _, _, done in trip:
        if not done.done():
            done.set_result(None)


# One command per trip, however many chunks it carries: APPEND each to its key, answering
# the new lengths (-1 where a key held something else). A pipeline of one APPEND per chunk
# cost its client 44 us of CPU per chunk at 5 per trip; this, 27 (a loop of 3,000, here).
_APPEND_ALL = """
local lengths = {}
for i, key in ipairs(KEYS) do
    local length = redis.pcall('APPEND', key, ARGV[i])
    lengths[i] = type(length) == 'number' and length or -1
end
return lengths
"""
_scripts: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


async def _append_all(items: list[tuple[str, Append]]) -> None:
    """APPEND every chunk in one trip; write again in whole each text Redis lost."""
    client = get_redis()
    assert client is not None
    script = _scripts.get(client)
    if script is None:  # redis-py loads it again by itself after a Redis restart
        script = _scripts[client] = client.register_script(_APPEND_ALL)
    keys = [_text_key(append.run_id) for _, append in items]
    lengths = await script(keys=keys, args=[append.text for _, append in items])
    for (conversation_id, append), length in zip(items, lengths, strict=True):
        if length != append.whole_bytes:
            await _write(conversation_id, append)


_batches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _AppendBatch]
_batches = weakref.WeakKeyDictionary()


async def aappend_reasoning(*, run_id: Any, text: str) -> None:
    """Append a chunk of the model's reasoning, for a `sync` on another process.

    Best effort, unlike the reply's text: reasoning is shown while it streams and stored
    whole on the reply; a chunk lost to a Redis restart only leaves a gap in what a socket
    joining elsewhere sees meanwhile.
    """
    client = get_redis()
    if client is None:
        _local_reasoning[str(run_id)] = _local_reasoning.get(str(run_id), "") + text
        return
    try:
        async with client.pipeline(transaction=False) as pipe:
            pipe.append(_reasoning_key(run_id), text)
            pipe.expire(_reasoning_key(run_id), KEY_TTL_SECONDS)
            await pipe.execute()
    except RedisError as exc:
        logger.warning("reasoning of %s not recorded: %s", run_id, exc)


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


async def aclear(*, conversation_id: Any, run_id: Any) -> None:
    """Forget a finished run."""
    client = get_redis()
    if client is None:
        _local.get(str(conversation_id), {}).pop(str(run_id), None)
        if not _local.get(str(conversation_id), True):
            del _local[str(conversation_id)]
        _local_reasoning.pop(str(run_id), None)
        return
    try:
        async with client.pipeline(transaction=True) as pipe:
            pipe.hdel(_runs_key(conversation_id), str(run_id))
            pipe.delete(_text_key(run_id), _reasoning_key(run_id))
            await pipe.execute()
    except RedisError as exc:  # the keys expire on their own
        logger.warning("reply progress of %s not cleared: %s", run_id, exc)
