"""The reply in progress, readable from every process: its run, what it answers, its text.

With Redis: `chat:reply:<conversation>` holds the run as JSON and `chat:reply-text:<run>`
the text, which the run APPENDs once per chunk before publishing the chunk, so a `sync`
on any process sees every chunk that a newly joined socket might have missed. Without
Redis (one process) a dict does the same.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

from .redis import get_redis

KEY_TTL_SECONDS = 3600  # refreshed by the run's heartbeat; a dead run's keys outlive it


class ReplyProgress(TypedDict):
    run_id: str
    reply_to: str
    text: str


_local: dict[str, ReplyProgress] = {}


def _run_key(conversation_id: Any) -> str:
    return f"chat:reply:{conversation_id}"


def _text_key(run_id: Any) -> str:
    return f"chat:reply-text:{run_id}"


async def astart(*, conversation_id: Any, run_id: Any, reply_to: Any) -> None:
    """Record that `run_id` is replying to message `reply_to`, with no text yet."""
    progress: ReplyProgress = {"run_id": str(run_id), "reply_to": str(reply_to), "text": ""}
    client = get_redis()
    if client is None:
        _local[str(conversation_id)] = progress
        return
    meta = json.dumps({"run_id": str(run_id), "reply_to": str(reply_to)})
    async with client.pipeline(transaction=True) as pipe:
        pipe.set(_run_key(conversation_id), meta, ex=KEY_TTL_SECONDS)
        pipe.set(_text_key(run_id), "", ex=KEY_TTL_SECONDS)
        await pipe.execute()


async def aappend(*, conversation_id: Any, run_id: Any, text: str) -> None:
    """Append one chunk to the reply's text."""
    client = get_redis()
    if client is None:
        progress = _local.get(str(conversation_id))
        if progress is not None and progress["run_id"] == str(run_id):
            progress["text"] += text
        return
    await client.append(_text_key(run_id), text)


async def atouch(*, conversation_id: Any, run_id: Any) -> None:
    """Keep a live run's keys from expiring."""
    client = get_redis()
    if client is not None:
        async with client.pipeline(transaction=False) as pipe:
            pipe.expire(_run_key(conversation_id), KEY_TTL_SECONDS)
            pipe.expire(_text_key(run_id), KEY_TTL_SECONDS)
            await pipe.execute()


async def aget(*, conversation_id: Any) -> ReplyProgress | None:
    """Return the reply in progress of a conversation, or None."""
    client = get_redis()
    if client is None:
        progress = _local.get(str(conversation_id))
        return dict(progress) if progress else None  # type: ignore[return-value]
    raw = await client.get(_run_key(conversation_id))
    if not raw:
        return None
    meta = json.loads(raw)
    text = await client.get(_text_key(meta["run_id"])) or ""
    return {"run_id": meta["run_id"], "reply_to": meta["reply_to"], "text": text}


async def aclear(*, conversation_id: Any, run_id: Any) -> None:
    """Forget a finished run (only if it is still the conversation's current one)."""
    client = get_redis()
    if client is None:
        progress = _local.get(str(conversation_id))
        if progress is not None and progress["run_id"] == str(run_id):
            del _local[str(conversation_id)]
        return
    raw = await client.get(_run_key(conversation_id))
    async with client.pipeline(transaction=True) as pipe:
        if raw and json.loads(raw).get("run_id") == str(run_id):
            pipe.delete(_run_key(conversation_id))
        pipe.delete(_text_key(run_id))
        await pipe.execute()
