"""Announcing a stored reply, and finishing the runs of processes that died.

Both the orchestrator (its own runs) and the watchdog (other processes' dead runs) end
a run the same way: the reply is stored by `store`, then `announce_reply` tells every
socket once.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from core.db_async import db_async

from .. import events
from ..models import ReplyRun
from ..realtime import progress
from ..realtime.frames import Generation, SyncStateFrame, Usage
from ..realtime.hub import get_hub
from . import store, threads

logger = logging.getLogger(__name__)

PROGRESS_WAIT_STEPS = 20  # × 0.1 s

_afinish_stale_run = db_async(store.finish_stale_run)
_arunning_run = db_async(store.running_run)
_arunning_runs = db_async(store.running_runs)
_aload_sync = db_async(store.load_sync)


def announce_reply(finished: store.Finished, *, usage: Usage | None) -> None:
    """Tell every socket and the owner's list pages that a reply is stored (once).

    The run's progress record is forgotten after `generation.finished` leaves, in
    order with the run's own chunks.
    """
    conversation = finished.conversation
    owner = conversation.created_by_id
    events.publish(events.message_created(finished.message), conversation_id=conversation.pk)
    events.publish(
        events.conversation_updated(conversation), conversation_id=conversation.pk, user_id=owner
    )
    # Last: a client can treat it as the end of the run's frames.
    events.publish(
        events.generation_finished(finished.message, usage=usage),
        conversation_id=conversation.pk,
        clear_run=finished.message.pk,
    )


async def build_sync_state(*, conversation_id: Any, after: int) -> SyncStateFrame:
    """Return the messages after sequence number `after` and the replies in progress.

    No access check: for callers that did it (`sync`) or that act for the process.
    """
    key = str(conversation_id)
    # Read the progress before the rows: a reply stored in between is then in the rows.
    handles = get_hub().runs_of(key)
    current: list[Generation]
    if handles:  # ours: the text is right here, Redis or not
        current = [handle.generation() for handle in handles]
    else:
        found = await progress.aget(conversation_id=key)
        if not found and await _arunning_run(conversation_id=key) is not None:
            # Running elsewhere but no record (Redis just restarted): its process writes
            # the whole text again with its next chunk, within moments.
            for _ in range(PROGRESS_WAIT_STEPS):
                await asyncio.sleep(0.1)
                if found := await progress.aget(conversation_id=key):
                    break
        current = [_generation(p) for p in found]
    run_ids = [g["run_id"] for g in current]
    rows = await _aload_sync(conversation_id=key, after=after, run_ids=run_ids)
    return events.sync_state(
        rows.messages,
        [g for g in current if g["run_id"] not in rows.stored],
        rows.current_message_id,
        has_more=rows.has_more,
    )


def _generation(found: progress.ReplyProgress) -> Generation:
    generation: Generation = {
        "run_id": found["run_id"],
        "text": found["text"],
        "reasoning": found["reasoning"],
        "reply_to": found["reply_to"],
    }
    if found["model"]:
        generation["model"] = found["model"]
    return generation


def stale_before() -> datetime:
    """Return the time before which a running run's heartbeat means its process died."""
    return timezone.now() - timedelta(seconds=settings.CHAT_RUN_STALE_SECONDS)


async def arecover_if_stale(conversation_id: Any) -> bool:
    """Finish the conversation's runs if their process died; say whether one was."""
    runs = await _arunning_runs(conversation_id=conversation_id)
    return any([await arecover_stale_run(run) for run in runs])


async def arecover_stale_run(run: ReplyRun) -> bool:
    """Store a run whose heartbeat lapsed as `interrupted` and announce it; say if it was."""
    key = str(run.conversation_id)
    limit = stale_before()
    if get_hub().run(key, run.pk) is not None or run.heartbeat_at >= limit:
        return False  # alive (here, or its process still beats)
    current = await progress.aget_run(conversation_id=key, run_id=run.pk)
    text = current["text"] if current else ""
    finished = await _afinish_stale_run(run=run, stale_before=limit, content=text)
    if finished is None:
        return False
    logger.warning("reply %s: its process died; stored as interrupted", run.pk)
    if run.lane > 0:  # the second of a side-by-side pair: its own thread goes with it
        await threads.adrop_side_thread(key, run.pk)
    if finished.question is not None:
        try:  # before announcing: a client told the turn ended may ask the agent about it
            await threads.arecord_cut_off_turn(question=finished.question, reply=finished.message)
        except Exception:  # the rows are right; only the agent's memory of this turn is short
            logger.exception("reply %s: could not record the cut-off turn in memory", run.pk)
    announce_reply(finished, usage=None)
    return True
