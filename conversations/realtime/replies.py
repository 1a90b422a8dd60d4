"""Start, stop and sync replies: the one path every websocket and API message takes.

A reply is a task owned by the process (its hub), not by the socket that asked for it:
it keeps running when that socket closes and is stored when done, stopped or failed.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from .. import agent_service
from ..db_async import db_async
from ..errors import Invalid, NotFound, TooLarge
from ..models import Conversation, Message
from ..selectors import get_conversation_for_user
from ..serializers import conversation_to_dict, message_to_dict
from . import progress, runs
from .coalescer import Coalescer
from .frames import ErrorFrame, SyncStateFrame, Usage, error_frame
from .hub import Hub, RunHandle, get_hub
from .ratelimit import acheck_rate

logger = logging.getLogger(__name__)

_get_conversation = db_async(get_conversation_for_user, close_serial=False)
_claim_reply = db_async(runs.claim_reply, close_serial=False)
_load_sync = db_async(runs.load_sync)
_finish_run_row = db_async(runs.finish_run)
_beat_row = db_async(runs.beat)

CLIENT_ID_MAX_LENGTH = 100
ErrorCallback = Callable[[ErrorFrame], Awaitable[None]]


@dataclass(frozen=True)
class StartedReply:
    """The stored user message and the reply answering it."""

    user_message: Message
    run_id: uuid.UUID | None  # None: a repeated client_id whose reply is not running here
    created: bool  # False: the client_id was seen before; nothing new was stored
    _done: asyncio.Future[Message | None] = field(repr=False)

    def assistant_message(self) -> Awaitable[Message | None]:
        """Wait for the stored reply (cancelling the wait leaves the reply running)."""
        return asyncio.shield(self._done)


def clean_content(content: Any) -> str:
    """Return a user message's text, or raise Invalid / TooLarge."""
    if not isinstance(content, str) or not content.strip():
        raise Invalid("content must be a non-empty string.")
    if len(content) > settings.MESSAGE_MAX_CHARS:
        raise TooLarge(f"Message is longer than {settings.MESSAGE_MAX_CHARS} characters.")
    return content


def clean_client_id(client_id: Any) -> str | None:
    """Return a message's idempotency key, or raise Invalid."""
    if client_id is None:
        return None
    if not isinstance(client_id, str) or not client_id or len(client_id) > CLIENT_ID_MAX_LENGTH:
        raise Invalid(f"client_id must be a string of 1 to {CLIENT_ID_MAX_LENGTH} characters.")
    return client_id


async def start_reply(
    *,
    user: Any,
    conversation_id: Any,
    content: Any,
    client_id: Any = None,
    on_error: ErrorCallback | None = None,
) -> StartedReply:
    """Store the user's message (once per client_id) and start the reply to it.

    Raises NotFound, Invalid, TooLarge, RateLimited, or Conflict(code="busy") when a
    reply is already running in the conversation; none of them stores anything.
    `on_error` hears `llm_unavailable` if the model fails.
    """
    content = clean_content(content)
    client_id = clean_client_id(client_id)
    await acheck_rate(user_id=user.pk)
    hub = get_hub()

    async def claim_slot() -> runs.Claim:
        return await _claim_reply(
            conversation_id=conversation_id,
            user=user,
            content=content,
            client_id=client_id,
            run_id=uuid.uuid4(),
        )

    try:
        claim = await claim_slot()
    except runs.Busy as busy:
        # The running reply may belong to a process that died: finish it, then go on.
        if not await arecover_if_stale(busy.conversation):
            raise
        claim = await claim_slot()
    if not claim.created:
        return _repeated(hub, claim)
    key, run_id = str(claim.conversation.pk), claim.run_id
    assert run_id is not None
    hub.post(key, {"type": "message.created", "message": message_to_dict(claim.user_message)})
    hub.post(key, _conversation_frame(claim.conversation))
    await progress.astart(conversation_id=key, run_id=run_id, reply_to=claim.user_message.pk)
    done: asyncio.Future[Message | None] = hub.loop.create_future()
    handle = RunHandle(key, run_id, done, on_error)
    run = _run_reply(hub, handle, claim.conversation, claim.user_message)
    handle.task = hub.loop.create_task(run)
    await hub.add_run(handle)
    return StartedReply(claim.user_message, run_id, True, done)


def _repeated(hub: Hub, claim: runs.Claim) -> StartedReply:
    key = str(claim.user_message.conversation_id)
    handle = hub.runs.get(key)
    if claim.reply is None and handle is not None and handle.run_id == claim.run_id:
        return StartedReply(claim.user_message, handle.run_id, False, handle.done)
    done: asyncio.Future[Message | None] = hub.loop.create_future()
    done.set_result(claim.reply)
    return StartedReply(claim.user_message, None, False, done)


async def stop_reply(*, user: Any, conversation_id: Any) -> bool:
    """Stop the conversation's running reply wherever it runs; say whether one was running.

    The run stores its partial text with finish_reason "stopped". Raises NotFound.
    """
    conversation = await _get_conversation(user=user, conversation_id=conversation_id)
    if await arecover_if_stale(conversation):
        return True
    hub, key = get_hub(), str(conversation.pk)
    if key not in hub.runs and conversation.active_run_id is None:
        return False
    await hub.request_stop(key)
    return True


async def sync_state(*, user: Any, conversation_id: Any, after: int) -> SyncStateFrame:
    """Return the messages after sequence number `after` and the reply in progress."""
    conversation = await _get_conversation(user=user, conversation_id=conversation_id)
    await arecover_if_stale(conversation)
    # Read the progress before the rows: a reply stored in between is then in the rows.
    current = await progress.aget(conversation_id=conversation.pk)
    run_id = current["run_id"] if current else None
    messages, stored = await _load_sync(conversation_id=conversation.pk, after=after, run_id=run_id)
    generation = None
    if current is not None and not stored:
        generation = {"run_id": current["run_id"], "text": current["text"]}
    return {
        "type": "sync.state",
        "messages": [message_to_dict(m) for m in messages],
        "generation": generation,
    }


async def arecover_if_stale(conversation: Conversation) -> bool:
    """Finish a reply whose process died (heartbeat lapsed) as `interrupted`; say if one was."""
    run_id = conversation.active_run_id
    hub, key = get_hub(), str(conversation.pk)
    if run_id is None or key in hub.runs:
        return False
    stale_before = timezone.now() - timedelta(seconds=settings.CHAT_RUN_STALE_SECONDS)
    beat_at = conversation.active_run_heartbeat
    if beat_at is not None and beat_at >= stale_before:
        return False
    current = await progress.aget(conversation_id=key)
    text = current["text"] if current and current["run_id"] == str(run_id) else ""
    finished = await _finish_run_row(
        conversation_id=key,
        run_id=run_id,
        content=text,
        finish_reason=Message.FinishReason.INTERRUPTED,
        stale_before=stale_before,
    )
    if finished is None:
        return False
    await progress.aclear(conversation_id=key, run_id=run_id)
    conversation.active_run_id = conversation.active_run_heartbeat = None
    try:  # before announcing: a client told the turn ended may ask the agent about it
        await agent_service.arecord_cut_off_turn(finished.message)
    except Exception:  # the rows are right; only the agent's memory of this turn is short
        logger.exception("could not record the interrupted turn %s in memory", run_id)
    _announce_finished(hub, finished, usage=None)
    return True


def _conversation_frame(conversation: Conversation) -> dict[str, Any]:
    return {"type": "conversation.updated", "conversation": conversation_to_dict(conversation)}


def _announce_finished(
    hub: Hub, finished: runs.Finished, *, usage: Usage | None, stored_announced: bool = False
) -> None:
    message = finished.message
    key = str(message.conversation_id)
    as_dict = message_to_dict(message)
    if not stored_announced:
        hub.post(key, {"type": "message.created", "message": as_dict})
        hub.post(key, _conversation_frame(finished.conversation))
    hub.post(  # last, so a client can treat it as the end of the run's frames
        key,
        {
            "type": "generation.finished",
            "run_id": str(message.pk),
            "message": as_dict,
            "finish_reason": message.finish_reason,
            "usage": usage or {"input_tokens": 0, "output_tokens": message.tokens_used},
        },
    )


# --- the run ------------------------------------------------------------------------
async def _run_reply(
    hub: Hub, handle: RunHandle, conversation: Conversation, user_message: Message
) -> None:
    """Run one agent turn, streaming its events, and store the reply however it ends."""
    run_id = str(handle.run_id)
    coalescer = Coalescer(hub=hub, conversation_id=handle.conversation_id, run_id=run_id)
    outcome: dict[str, Any] = {"usage": None}
    heartbeat: asyncio.Task[None] | None = None
    finish_reason = Message.FinishReason.ERROR
    stored: Message | None = None
    try:
        handle.started = True
        if handle.stop_requested:
            raise asyncio.CancelledError
        coalescer.post(
            {"type": "generation.started", "run_id": run_id, "reply_to": str(user_message.pk)}
        )
        heartbeat = hub.loop.create_task(_beat(handle))
        stored = await agent_service.arun_agent_turn(
            conversation=conversation,
            user_message=user_message,
            reply_id=handle.run_id,
            on_event=_event_handler(coalescer, outcome),
        )
        finish_reason = stored.finish_reason or Message.FinishReason.END_TURN
    except asyncio.CancelledError:
        # A stop asked for it; anything else cancelling a run is the process going away.
        finish_reason = (
            Message.FinishReason.STOPPED
            if handle.stop_requested
            else Message.FinishReason.INTERRUPTED
        )
    except Exception:
        logger.exception("reply %s failed", run_id)
    finally:
        handle.finishing = True
        if heartbeat is not None:
            heartbeat.cancel()
        coalescer.flush()
        await _finish_run(hub, handle, coalescer, finish_reason, outcome["usage"], stored)


def _event_handler(coalescer: Coalescer, outcome: dict[str, Any]) -> agent_service.EventCallback:
    run_id = coalescer.run_id

    async def on_event(event: Any) -> None:
        kind = event.get("type")
        if kind == "token":
            coalescer.add_token(event.get("text", ""))
        elif kind == "thinking":
            frame = {"type": "thinking", "run_id": run_id}
            coalescer.post({**frame, "step": event["step"], "content": event["content"]})
        elif kind == "sources":
            coalescer.post({"type": "sources", "run_id": run_id, "items": event["items"]})
        elif kind == "finished":
            outcome["usage"] = event.get("usage")
            coalescer.flush()  # the last chunk goes out before the stored reply is announced

    return on_event


async def _finish_run(
    hub: Hub,
    handle: RunHandle,
    coalescer: Coalescer,
    finish_reason: str,
    usage: Usage | None,
    stored: Message | None,
) -> None:
    """Store the reply unless the agent did, free the slot, announce, and resolve waiters."""
    key, message = handle.conversation_id, None
    # The agent stored, announced and freed the slot in one go (agent_service.store_reply).
    done_by_agent = (
        stored is not None
        and Message.conversation.is_cached(stored)
        and stored.conversation.active_run_id is None
    )
    try:
        if stored is not None and done_by_agent:
            finished = runs.Finished(stored.conversation, stored, False)
        else:
            finished = await _finish_run_row(
                conversation_id=key,
                run_id=handle.run_id,
                content=coalescer.text,
                finish_reason=finish_reason,
                stored=stored,
            )
        await progress.aclear(conversation_id=key, run_id=handle.run_id)
        if finished is not None:
            message = finished.message
            _announce_finished(hub, finished, usage=usage, stored_announced=done_by_agent)
    except NotFound:  # the conversation was deleted meanwhile
        await progress.aclear(conversation_id=key, run_id=handle.run_id)
    except Exception:
        logger.exception("could not finish reply %s", handle.run_id)
    finally:
        await hub.remove_run(handle)
        if not handle.done.done():
            handle.done.set_result(message)
    if message is not None and message.finish_reason == Message.FinishReason.ERROR:
        await hub.flushed(key)  # after generation.finished, not before it
        await _notify_error(handle)


async def _notify_error(handle: RunHandle) -> None:
    if handle.on_error is None:
        return
    try:
        await handle.on_error(error_frame("llm_unavailable", "The model did not answer."))
    except Exception:
        logger.debug("the socket that asked for %s is gone", handle.run_id)


async def _beat(handle: RunHandle) -> None:
    """Refresh the run's heartbeat so other processes know it is alive."""
    while True:
        await asyncio.sleep(settings.CHAT_RUN_HEARTBEAT_SECONDS)
        try:
            await _beat_row(conversation_id=handle.conversation_id, run_id=handle.run_id)
            await progress.atouch(conversation_id=handle.conversation_id, run_id=handle.run_id)
        except Exception:
            logger.exception("heartbeat of %s failed", handle.run_id)
