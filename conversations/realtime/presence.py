"""How many sockets a conversation has open, in every process (a temporary one lives by it).

With Redis: the hash `chat:presence:<conversation>` holds one count per process (its
PROCESS_ID), and when a close leaves no socket anywhere the same script stamps
`chat:presence-empty:<conversation>` with a fresh token. Whoever waits to act on "nobody
came back" (conversations/temporary.py) holds that token and acts only if the
conversation is still empty *and* no later close has stamped another one. Without Redis
(one process) two dicts do the same.

A process that dies leaves its count behind, so its conversations look occupied: they are
kept (never deleted early) until the purge of day-old temporary conversations. While
Redis is unreachable the same holds: nothing is found empty (a warning is logged).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from redis.exceptions import RedisError

from .interprocess import PROCESS_ID
from .redis import get_redis

logger = logging.getLogger(__name__)

KEY_TTL_SECONDS = 7 * 24 * 3600  # refreshed on every join; outlives any socket kept open

# KEYS: the counts, the empty stamp. ARGV: this process, a new token, the stamp's TTL.
_LEAVE = """
local left = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if left <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
local total = 0
for _, n in ipairs(redis.call('HVALS', KEYS[1])) do total = total + tonumber(n) end
if total <= 0 then redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3]) end
return total
"""

_local_counts: dict[str, int] = {}
_local_empty: dict[str, str] = {}


def _counts_key(conversation_id: Any) -> str:
    return f"chat:presence:{conversation_id}"


def _empty_key(conversation_id: Any) -> str:
    return f"chat:presence-empty:{conversation_id}"


async def ajoin(conversation_id: Any) -> None:
    """Count one more socket on the conversation (in this process)."""
    key = str(conversation_id)
    client = get_redis()
    if client is None:
        _local_counts[key] = _local_counts.get(key, 0) + 1
        return
    try:
        async with client.pipeline(transaction=True) as pipe:
            pipe.hincrby(_counts_key(key), PROCESS_ID, 1)
            pipe.expire(_counts_key(key), KEY_TTL_SECONDS)
            await pipe.execute()
    except RedisError as exc:
        logger.warning("presence of %s not counted: %s", key, exc)


async def aleave(conversation_id: Any, *, stamp_ttl: float) -> str | None:
    """Count one socket less; when none is left anywhere, return the token stamped for
    this moment (kept `stamp_ttl` seconds), else None."""
    key = str(conversation_id)
    token = uuid.uuid4().hex
    client = get_redis()
    if client is None:
        left = _local_counts.get(key, 0) - 1
        if left > 0:
            _local_counts[key] = left
            return None
        _local_counts.pop(key, None)
        _local_empty[key] = token
        return token
    try:
        total = await client.eval(
            _LEAVE,
            2,
            _counts_key(key),
            _empty_key(key),
            PROCESS_ID,
            token,
            max(1, int(stamp_ttl)),
        )
    except RedisError as exc:
        logger.warning("presence of %s not counted down: %s", key, exc)
        return None
    return token if int(total) <= 0 else None


async def astill_empty(conversation_id: Any, token: str) -> bool:
    """Say whether the conversation has had no socket since the close stamped `token`."""
    key = str(conversation_id)
    client = get_redis()
    if client is None:
        return _local_counts.get(key, 0) <= 0 and _local_empty.get(key) == token
    try:
        async with client.pipeline(transaction=True) as pipe:
            pipe.hvals(_counts_key(key))
            pipe.get(_empty_key(key))
            counts, stamped = await pipe.execute()
    except RedisError as exc:
        logger.warning("presence of %s not read: %s", key, exc)
        return False
    return sum(int(n) for n in counts) <= 0 and stamped == token


async def aforget(conversation_id: Any) -> None:
    """Drop what is counted of a conversation that is gone."""
    key = str(conversation_id)
    client = get_redis()
    if client is None:
        _local_counts.pop(key, None)
        _local_empty.pop(key, None)
        return
    try:
        await client.delete(_counts_key(key), _empty_key(key))
    except RedisError as exc:
        logger.warning("presence of %s not dropped: %s", key, exc)
