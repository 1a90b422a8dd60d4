"""One watchdog task per server process, every CHAT_RUN_HEARTBEAT_SECONDS.

- The runs of this process beat (one write for all of them), so other processes know
  they are alive; a run another process has meanwhile stored as dead stops streaming.
- Runs whose process died (heartbeat older than CHAT_RUN_STALE_SECONDS) are stored as
  `interrupted` and announced, so a socket watching from another process leaves its
  "generating" state without sending anything. Every process looks at every stale run;
  the conditional store lets exactly one of them win.
- Sockets opened with an API token that has since been revoked are closed with 4401.
- A channel-layer subscription broken by an outage (Redis restarting) is rebuilt, and
  the sockets it feeds get a `sync.state` with what they may have missed.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any

from django.conf import settings

from accounts.tokens import live_token_ids
from core import rls
from core.db_async import db_async

from .. import events
from ..models import ReplyRun
from ..realtime import progress
from ..realtime.hub import Hub
from . import store
from .recovery import arecover_stale_run, build_sync_state, stale_before

logger = logging.getLogger(__name__)

CLOSE_TOKEN_REVOKED = 4401

_abeat = db_async(store.beat)
_astale_runs = db_async(store.stale_runs)
_alive_token_ids = db_async(live_token_ids)
_watchdogs: weakref.WeakKeyDictionary[Hub, asyncio.Task[None]] = weakref.WeakKeyDictionary()


def _load_run(run_id: Any) -> ReplyRun | None:
    return ReplyRun.objects.filter(pk=run_id).first()


_aload_run = db_async(_load_run)


def ensure_watchdog(hub: Hub) -> None:
    """Start the process's watchdog if it is not running yet."""
    task = _watchdogs.get(hub)
    if task is None or task.done():
        _watchdogs[hub] = hub.start_task(_watch(hub), name="reply-watchdog")


async def _watch(hub: Hub) -> None:
    # Process-wide work over every user's runs and sockets: the maintenance role (core/rls.py).
    with rls.maintenance():
        await _watch_forever(hub)


async def _watch_forever(hub: Hub) -> None:
    while True:
        await asyncio.sleep(settings.CHAT_RUN_HEARTBEAT_SECONDS)
        for check in (beat_runs, recover_stale_runs, close_revoked_sockets, repair_subscription):
            try:
                await check(hub)
            except Exception:
                logger.exception("watchdog: %s failed", check.__name__)


async def beat_runs(hub: Hub) -> int:
    """Refresh the heartbeat of this process's runs; stop those stored elsewhere meanwhile."""
    handles = [handle for runs in hub.runs.values() for handle in runs.values()]
    if not handles:
        return 0
    alive = await _abeat(run_ids=[h.run_id for h in handles])
    await progress.atouch(
        runs=[(h.conversation_id, h.run_id) for h in handles if h.run_id in alive]
    )
    for handle in handles:
        if handle.run_id not in alive and hub.run(handle.conversation_id, handle.run_id) is handle:
            # Another process took it for dead and stored it: stop streaming here.
            logger.warning("reply %s: ended elsewhere while running here", handle.run_id)
            handle.cancel("shutdown")
    return len(alive)


async def recover_stale_runs(hub: Hub) -> int:
    """Store every run of a dead process as interrupted; return how many.

    A run that cannot be stored (a database error) is logged and left for the next pass;
    the runs after it are still recovered in this one.
    """
    recovered = 0
    for run_id in await _astale_runs(stale_before=stale_before()):
        try:
            run = await _aload_run(run_id)
            if run is not None and await arecover_stale_run(run):
                recovered += 1
        except Exception:
            logger.exception("watchdog: could not recover reply %s", run_id)
    return recovered


async def repair_subscription(hub: Hub) -> int:
    """Rebuild a broken channel-layer subscription; send its sockets what they missed.

    After an outage each conversation's sockets here get a `sync.state` (unasked) with
    the messages after the last one this process delivered and the reply in progress.
    """
    await hub.resubscribe()
    await hub.check_layer()
    missed = hub.take_caught_up()
    for key in missed:
        after = hub.delivered_before_loss(key)
        state = await build_sync_state(conversation_id=key, after=after)
        events.publish(state, conversation_id=key, local_only=True)
    return len(missed)


async def close_revoked_sockets(hub: Hub) -> int:
    """Close the sockets whose API token was revoked; return how many."""
    sockets: list[Any] = [s for s in hub.all_sockets() if getattr(s, "token_id", None)]
    if not sockets:
        return 0
    live = await _alive_token_ids({s.token_id for s in sockets})
    closed = 0
    for sock in sockets:
        if sock.token_id not in live:
            await sock.close_with(CLOSE_TOKEN_REVOKED)
            closed += 1
    return closed
