"""What a user does to one message: rate it, report it (deleting it: branches.py)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from core.errors import Invalid

from .models import Message, MessageFeedback
from .moderation import mark_reported
from .selectors import get_message_for_user

logger = logging.getLogger(__name__)

COMMENT_MAX_LENGTH = 2000
REASON_MAX_LENGTH = 500


def _clean(value: Any, *, field: str, max_length: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Invalid(_("%(field)s must be a string.") % {"field": field})
    if len(value) > max_length:
        raise Invalid(
            _("%(field)s is longer than %(n)s characters.") % {"field": field, "n": max_length}
        )
    return value.strip()


@transaction.atomic
def rate_message(
    *, user: Any, message_id: Any, rating: str, comment: str = "", reasons: Sequence[str] = ()
) -> MessageFeedback:
    """Record the user's up/down rating of a message, with what was wrong (`reasons`:
    MessageFeedback.Reason values); a second rating replaces the first."""
    if rating not in MessageFeedback.Rating.values:
        raise Invalid(_("rating must be up or down."))
    unknown = [r for r in reasons if r not in MessageFeedback.Reason.values]
    if unknown:
        raise Invalid(_("Unknown reason: %(names)s.") % {"names": ", ".join(map(str, unknown))})
    message = get_message_for_user(user=user, message_id=message_id)
    if message.role != Message.Role.ASSISTANT:
        raise Invalid(_("Only the assistant's replies can be rated."))
    feedback, _created = MessageFeedback.objects.update_or_create(
        user=user,
        message=message,
        defaults={
            "rating": rating,
            "comment": _clean(comment, field="comment", max_length=COMMENT_MAX_LENGTH),
            "reasons": [r for r in MessageFeedback.Reason.values if r in reasons],
        },
    )
    return feedback


@transaction.atomic
def report_message(*, user: Any, message_id: Any, reason: str = "") -> Message:
    """Flag a message for the moderators with the user's reason (the queue in the admin)."""
    message = get_message_for_user(user=user, message_id=message_id)
    message.is_flagged = True
    message.flag_reason = (
        _clean(reason, field="reason", max_length=REASON_MAX_LENGTH) or "Reported by the user"
    )
    mark_reported(message)
    message.save(update_fields=["is_flagged", "flag_reason", "metadata"])
    return message
