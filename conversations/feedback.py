"""What a user does to one message: rate it, report it, delete it."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import Count, Max, Sum

from core.errors import Conflict, Invalid, NotFound

from . import branches, events
from .models import Conversation, Message, MessageFeedback, ReplyRun
from .selectors import get_message_for_user
from .services import lock_conversation
from .tree import Tree

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
    if message.role != Message.Role.ASSISTANT:
        raise Invalid("Only the assistant's replies can be rated.")
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
def delete_message(*, user: Any, message_id: Any) -> Conversation:
    """Delete a message and every message under it; counters and the current branch follow.

    Their sequence numbers stay unused. Locks the conversation row, then reads the tree
    under the lock: of two concurrent deletes of one message the second finds it gone
    (NotFound), and deletes of different messages each count what the other left. A
    reply being written under the message holds it (Conflict "busy": stop it first).
    The agent forgets nothing by hand: its memory is per branch, and no branch that
    remains holds a deleted message.
    """
    found = get_message_for_user(user=user, message_id=message_id)
    conversation = lock_conversation(found.conversation_id)
    tree = Tree.of(conversation.pk)
    if found.pk not in tree.parent:
        raise NotFound("Message not found.")
    doomed = set(tree.subtree(found.pk))
    if ReplyRun.objects.filter(
        conversation=conversation, status=ReplyRun.Status.RUNNING, reply_to_id__in=doomed
    ).exists():
        raise Conflict("A reply is being written under this message; stop it first.", code="busy")
    rows = list(conversation.messages.filter(pk__in=doomed).values_list("pk", "sequence_number"))
    conversation.current_message_id = branches.leaf_after_delete(conversation, tree, doomed)
    conversation.save(update_fields=["current_message"])
    conversation.messages.filter(pk__in=doomed).delete()
    totals = conversation.messages.aggregate(
        n=Count("id"), tokens=Sum("tokens_used"), last=Max("created_at")
    )
    conversation.message_count = totals["n"] or 0
    conversation.total_tokens_used = totals["tokens"] or 0
    conversation.last_message_at = totals["last"]
    conversation.save(
        update_fields=["message_count", "total_tokens_used", "last_message_at", "updated_at"]
    )
    for pk, seq in sorted(rows, key=lambda row: row[1]):
        events.send_on_commit(
            events.message_deleted(
                message_id=pk, conversation_id=conversation.pk, sequence_number=seq
            ),
            conversation_id=conversation.pk,
        )
    events.send_conversation_on_commit(conversation)
    return conversation


adelete_message = sync_to_async(delete_message)
