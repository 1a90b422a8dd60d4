"""Database side of a reply run: claim the slot, beat, store the reply, recover, sync.

Sync functions with transactions (`select_for_update` needs them); the orchestrator
reaches them through `core.db_async`. Every change of a run's status happens under its
conversation's row lock, so a claim, a finish and a recovery never interleave.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from agent.tokens import estimate_tokens
from core.errors import Conflict, NotFound

from .. import services
from ..models import Conversation, Message, ReplyRun
from ..selectors import access_conversation

SYNC_MAX_MESSAGES = 10_000


class Busy(Conflict):
    """A reply is already running in the conversation (maybe in a process that died)."""

    def __init__(self, run: ReplyRun) -> None:
        super().__init__("A reply is already running in this conversation.", code="busy")
        self.run = run


@dataclass(frozen=True)
class Claim:
    conversation: Conversation  # annotated with owner_has_documents
    user_message: Message
    created: bool  # False: the client_id was seen before and nothing was stored
    run: ReplyRun | None  # the run answering the message (None: an imported message)
    reply: Message | None  # that run's stored reply, once it is stored


@dataclass(frozen=True)
class Finished:
    conversation: Conversation  # as written with the reply
    message: Message
    question: Message | None  # the message the reply answers
    stored_now: bool = True  # False: another process had already stored (and announced) it


@dataclass(frozen=True)
class Reply:
    """What a run produced, to be stored as its assistant message."""

    content: str
    finish_reason: str
    parts: list[dict[str, Any]]
    model: str = ""
    tokens_used: int | None = None
    metadata: dict[str, Any] | None = None


@transaction.atomic
def claim_reply(
    *,
    user: Any,
    conversation_id: Any,
    content: str,
    client_id: str | None,
    run_id: uuid.UUID,
    owner: str,
) -> Claim:
    """Store the user's message and start run `run_id` answering it, in one transaction.

    Raises NotFound for a conversation that is missing or someone else's. A repeated
    `client_id` stores nothing and claims nothing; a run already running raises Busy
    and stores nothing.
    """
    conversation = access_conversation(
        user=user, conversation_id=conversation_id, lock=True, with_documents=True
    )
    if client_id:
        existing = conversation.messages.filter(client_id=client_id).first()
        if existing is not None:
            run = ReplyRun.objects.filter(reply_to=existing).order_by("-started_at").first()
            reply = None
            if run is not None and run.status == ReplyRun.Status.FINISHED:
                reply = Message.objects.filter(pk=run.pk).first()
            return Claim(conversation, existing, False, run, reply)
    # Asked after the lock, in its own statement: it sees a run committed while we waited
    # (a subquery of the locking statement would see the snapshot from before the wait).
    running = ReplyRun.objects.filter(
        conversation=conversation, status=ReplyRun.Status.RUNNING
    ).first()
    if running is not None:
        raise Busy(running)
    message = services.insert_message(
        conversation,
        role=Message.Role.USER,
        content=content,
        created_by=user,
        tokens_used=estimate_tokens(content),
        client_id=client_id,
        run_id=run_id,
    )
    run = ReplyRun.objects.create(
        id=run_id,
        conversation=conversation,
        reply_to=message,
        owner=owner,
        heartbeat_at=timezone.now(),
    )
    return Claim(conversation, message, True, run, None)


def beat(*, run_ids: list[Any]) -> set[uuid.UUID]:
    """Refresh the heartbeat of runs in one write; return those that are still running."""
    if not run_ids:
        return set()
    with transaction.atomic():
        rows = ReplyRun.objects.filter(pk__in=run_ids, status=ReplyRun.Status.RUNNING)
        alive = set(rows.values_list("pk", flat=True))
        rows.filter(pk__in=alive).update(heartbeat_at=timezone.now())
    return alive


def _end(run_id: Any, **conditions: Any) -> bool:
    """Mark a running run finished (if `conditions` hold); say whether it was running."""
    rows = ReplyRun.objects.filter(pk=run_id, status=ReplyRun.Status.RUNNING, **conditions)
    return bool(rows.update(status=ReplyRun.Status.FINISHED, finished_at=timezone.now()))


def _store(conversation: Conversation, run_id: Any, reply: Reply) -> Message:
    """Store a run's reply (its id is the run's); the caller holds the conversation's lock."""
    tokens = reply.tokens_used
    return services.insert_message(
        conversation,
        role=Message.Role.ASSISTANT,
        content=reply.content,
        parts=reply.parts,
        model=reply.model,
        tokens_used=tokens if tokens is not None else estimate_tokens(reply.content),
        finish_reason=reply.finish_reason,
        metadata=dict(reply.metadata or {}),
        message_id=run_id,
        run_id=run_id,
    )


@transaction.atomic
def finish_run(
    *, conversation_id: Any, run_id: Any, question: Message, reply: Reply
) -> Finished | None:
    """Store a run's reply and free the conversation's slot, in one transaction.

    Answers None when the conversation is gone. A run another process already ended
    (it thought this one dead) keeps that reply: it is returned, not stored again.
    """
    try:
        conversation = services.lock_conversation(conversation_id)
    except NotFound:
        return None
    if not _end(run_id):
        message = Message.objects.filter(pk=run_id).first()
        return Finished(conversation, message, question, False) if message else None
    return Finished(conversation, _store(conversation, run_id, reply), question)


@transaction.atomic
def finish_stale_run(*, run: ReplyRun, stale_before: datetime, content: str) -> Finished | None:
    """Store a dead process's run as `interrupted` with `content`; None if it is alive."""
    try:
        conversation = services.lock_conversation(run.conversation_id)
    except NotFound:
        return None
    if not _end(run.pk, heartbeat_at__lt=stale_before):
        return None
    reply = Reply(content=content, finish_reason=Message.FinishReason.INTERRUPTED, parts=[])
    question = Message.objects.filter(pk=run.reply_to_id).first()
    return Finished(conversation, _store(conversation, run.pk, reply), question)


def stale_runs(*, stale_before: datetime, limit: int = 50) -> list[uuid.UUID]:
    """Return running runs whose heartbeat is older than `stale_before`, oldest first."""
    rows = ReplyRun.objects.filter(status=ReplyRun.Status.RUNNING, heartbeat_at__lt=stale_before)
    return list(rows.order_by("heartbeat_at").values_list("pk", flat=True)[:limit])


def running_run(*, conversation_id: Any) -> ReplyRun | None:
    """Return the conversation's running run, if there is one."""
    return ReplyRun.objects.filter(
        conversation_id=conversation_id, status=ReplyRun.Status.RUNNING
    ).first()


def load_sync(
    *, conversation_id: Any, after: int, run_id: str | None
) -> tuple[list[Message], bool]:
    """Return the messages after `after` and whether reply `run_id` is already stored."""
    messages = list(
        Message.objects.filter(conversation_id=conversation_id, sequence_number__gt=after).order_by(
            "sequence_number"
        )[:SYNC_MAX_MESSAGES]
    )
    stored = bool(run_id) and Message.objects.filter(pk=run_id).exists()
    return messages, stored
