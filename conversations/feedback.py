"""What a user does to one message: rate it, report it, delete it."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import Count, Max, Sum

from core.errors import Conflict, Invalid, NotFound

from . import agent_service, events
from .models import Message, MessageFeedback
from .selectors import get_message_for_user
from .services import lock_conversation

logger = logging.getLogger(__name__)

COMMENT_MAX_LENGTH = 2000
REASON_MAX_LENGTH = 500


def _clean(value: Any, *, field: str, max_length: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Invalid(f"{field} must be a string.")
    if len(value) > max_length:
        raise Invalid(f"{field} is longer than {max_length} characters.")
    return value.strip()


@transaction.atomic
def rate_message(*, user: Any, message_id: Any, rating: str, comment: str = "") -> MessageFeedback:
    """Record the user's up/down rating of a message; a second rating replaces the first."""
    if rating not in MessageFeedback.Rating.values:
        raise Invalid("rating must be up or down.")
    message = get_message_for_user(user=user, message_id=message_id)
    feedback, _ = MessageFeedback.objects.update_or_create(
        user=user,
        message=message,
        defaults={
            "rating": rating,
            "comment": _clean(comment, field="comment", max_length=COMMENT_MAX_LENGTH),
        },
    )
    return feedback


@transaction.atomic
def report_message(*, user: Any, message_id: Any, reason: str = "") -> Message:
    """Flag a message for the moderators with the user's reason."""
    message = get_message_for_user(user=user, message_id=message_id)
    message.is_flagged = True
    message.flag_reason = (
        _clean(reason, field="reason", max_length=REASON_MAX_LENGTH) or "Reported by the user"
    )
    message.save(update_fields=["is_flagged", "flag_reason"])
    return message


@transaction.atomic
def delete_message(*, user: Any, message_id: Any) -> None:
    """Delete a message and make the counters true again; its sequence number stays unused.

    Locks the conversation row, then reads the message again under the lock: of two
    concurrent deletes of one message the second finds it gone (NotFound), and deletes
    of different messages each count what the other left.
    """
    found = get_message_for_user(user=user, message_id=message_id)
    conversation = lock_conversation(found.conversation_id)
    message = conversation.messages.filter(pk=found.pk).first()
    if message is None:
        raise NotFound("Message not found.")
    seq = message.sequence_number
    message.delete()
    totals = conversation.messages.aggregate(
        n=Count("id"), tokens=Sum("tokens_used"), last=Max("created_at")
    )
    conversation.message_count = totals["n"] or 0
    conversation.total_tokens_used = totals["tokens"] or 0
    conversation.last_message_at = totals["last"]
    conversation.save(
        update_fields=["message_count", "total_tokens_used", "last_message_at", "updated_at"]
    )
    events.send_on_commit(
        events.message_deleted(
            message_id=found.pk, conversation_id=conversation.pk, sequence_number=seq
        ),
        conversation_id=conversation.pk,
    )
    events.send_conversation_on_commit(conversation)


async def adelete_message(*, user: Any, message_id: Any) -> None:
    """Remove a message from the agent's memory, then from the conversation.

    The agent goes first: if it cannot forget the message, the row stays and the
    caller is told (409), rather than the agent remembering a deleted message.
    """
    message = await sync_to_async(get_message_for_user)(user=user, message_id=message_id)
    try:
        await agent_service.aremove_agent_message(
            conversation_id=str(message.conversation_id), message_id=str(message.id)
        )
    except Exception:
        logger.exception("could not remove message %s from the agent's memory", message.id)
        raise Conflict(
            "The message could not be removed from the agent's memory; nothing was deleted."
        ) from None
    await sync_to_async(delete_message)(user=user, message_id=message.id)
