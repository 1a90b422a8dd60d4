"""Database side of replies: claim the one-reply-at-a-time slot, beat, finish, recover.

Sync functions with transactions (`select_for_update` needs them); callers in async
code reach them through `database_sync_to_async`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from agent.tokens import estimate_tokens
from knowledge.models import DocumentChunk

from .. import services
from ..errors import Conflict, NotFound
from ..models import Conversation, Message
from ..selectors import NOT_FOUND_MESSAGE, parse_uuid

SYNC_MAX_MESSAGES = 10_000


@dataclass(frozen=True)
class Claim:
    conversation: Conversation
    user_message: Message
    created: bool  # False: the client_id was seen before and nothing was stored
    run_id: uuid.UUID | None  # the run answering the message, if one is running
    reply: Message | None  # the stored reply of a repeated client_id, if there is one


class Busy(Conflict):
    """A reply is already running in the conversation (maybe in a process that died)."""

    def __init__(self, conversation: Conversation) -> None:
        super().__init__("A reply is already running in this conversation.", code="busy")
        self.conversation = conversation


@dataclass(frozen=True)
class Finished:
    conversation: Conversation
    message: Message
    created: bool  # False when the agent had already stored it


def _lock_owned(conversation_id: Any, user: Any) -> Conversation:
    """Lock the user's conversation, annotated with `owner_has_documents`, or raise NotFound.

    One statement does the access check, the lock and the agent's "any documents?"
    question, which a reply otherwise asks in three round trips before it can start.
    """
    pk = parse_uuid(conversation_id)
    if pk is None or user is None or not user.is_authenticated:
        raise NotFound(NOT_FOUND_MESSAGE)
    has_documents = Exists(DocumentChunk.objects.filter(owner_id=OuterRef("created_by_id")))
    try:
        return (
            Conversation.objects.select_for_update()
            .annotate(owner_has_documents=has_documents)
            .get(pk=pk, created_by=user)
        )
    except Conversation.DoesNotExist:
        raise NotFound(NOT_FOUND_MESSAGE) from None


def _reply_after(conversation: Conversation, message: Message) -> Message | None:
    return conversation.messages.filter(
        sequence_number=message.sequence_number + 1, role=Message.Role.ASSISTANT
    ).first()


@transaction.atomic
def claim_reply(
    *, conversation_id: Any, user: Any, content: str, client_id: str | None, run_id: uuid.UUID
) -> Claim:
    """Store the user's message and take the conversation's reply slot for `run_id`.

    Raises NotFound for a conversation that is missing or someone else's. A repeated
    `client_id` stores nothing and claims nothing; a reply already running raises Busy
    and stores nothing.
    """
    conversation = _lock_owned(conversation_id, user)
    if client_id:
        existing = conversation.messages.filter(client_id=client_id).first()
        if existing is not None:
            reply = _reply_after(conversation, existing)
            running = conversation.active_run_id if reply is None else None
            return Claim(conversation, existing, False, running, reply)
    if conversation.active_run_id is not None:
        raise Busy(conversation)
    conversation.active_run_id = run_id
    conversation.active_run_heartbeat = timezone.now()
    message = services.insert_message(
        conversation,
        role=Message.Role.USER,
        content=content,
        created_by=user,
        tokens_used=estimate_tokens(content),
        client_id=client_id,
        also_save=("active_run_id", "active_run_heartbeat"),
    )
    return Claim(conversation, message, True, run_id, None)


def beat(*, conversation_id: Any, run_id: uuid.UUID) -> bool:
    """Refresh a run's heartbeat; say whether the run still holds the slot."""
    return bool(
        Conversation.objects.filter(pk=conversation_id, active_run_id=run_id).update(
            active_run_heartbeat=timezone.now()
        )
    )


def read_active_run(*, conversation_id: Any) -> tuple[uuid.UUID | None, datetime | None]:
    """Return the conversation's running reply and its last heartbeat."""
    row = (
        Conversation.objects.filter(pk=conversation_id)
        .values_list("active_run_id", "active_run_heartbeat")
        .first()
    )
    return row if row is not None else (None, None)


@transaction.atomic
def finish_run(
    *,
    conversation_id: Any,
    run_id: uuid.UUID,
    content: str,
    finish_reason: str,
    stale_before: datetime | None = None,
    stored: Message | None = None,
) -> Finished | None:
    """Store the reply `run_id` unless the agent did (`stored`), and free the slot.

    With `stale_before`, act only on a run whose heartbeat is older (a dead process's
    run) and answer None when the run is alive or already finished.
    """
    conversation = services.lock_conversation(conversation_id)
    if stale_before is not None and (
        conversation.active_run_id != run_id
        or (conversation.active_run_heartbeat and conversation.active_run_heartbeat >= stale_before)
    ):
        return None
    message = stored or Message.objects.filter(pk=run_id).first()
    created = message is None
    release: tuple[str, ...] = ()
    if conversation.active_run_id == run_id:
        conversation.active_run_id = conversation.active_run_heartbeat = None
        release = ("active_run_id", "active_run_heartbeat")
    if message is None:
        message = services.insert_message(
            conversation,
            role=Message.Role.ASSISTANT,
            content=content,
            finish_reason=finish_reason,
            message_id=run_id,
            also_save=release,
        )
    elif release:
        conversation.save(update_fields=list(release))
    return Finished(conversation, message, created)


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
