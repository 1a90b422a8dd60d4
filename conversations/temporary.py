"""Temporary conversations: kept only while someone has them open (SPEC: the landing).

A temporary conversation is never listed, searched, shared or used for memories (the
selectors, shares and the agent turns check `temporary`). This module ends its life:

- when its last socket closes, in any process, and none opens again within
  CHAT_TEMPORARY_GRACE_SECONDS (a reload or a reconnect keeps it);
- a day after its last message (or its creation, with none), by `manage.py
  purge_archived`: the backstop when no socket ever closed here (created through the API
  and never opened, a process that died, Redis unreachable when it mattered).

Either way it goes through `services.delete_conversation` (its agent thread too).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core import rls
from core.db_async import db_async

from . import services
from .models import Conversation
from .realtime import presence
from .realtime.hub import get_hub

logger = logging.getLogger(__name__)

KEPT_AFTER_LAST_MESSAGE = timedelta(hours=24)
PURGE_BATCH = 200


def grace_seconds() -> float:
    """Return how long a temporary conversation outlives its last socket."""
    return float(settings.CHAT_TEMPORARY_GRACE_SECONDS)


async def asocket_opened(conversation_id: Any) -> None:
    """Count a socket opened on a temporary conversation."""
    await presence.ajoin(conversation_id)


async def asocket_closed(conversation_id: Any, *, owner_id: Any) -> None:
    """Count a socket closed; when it was the last one anywhere, delete the conversation
    after the grace period unless a socket opens meanwhile."""
    grace = grace_seconds()
    token = await presence.aleave(conversation_id, stamp_ttl=grace * 2 + 60)
    if token is None:
        return
    get_hub().start_task(
        _delete_after_grace(conversation_id, owner_id=owner_id, token=token, grace=grace),
        name=f"temporary-{conversation_id}",
    )


async def _delete_after_grace(conversation_id: Any, *, owner_id: Any, token: str, grace: float):
    await asyncio.sleep(grace)
    if not await presence.astill_empty(conversation_id, token):
        return  # someone came back (or a later close waits its own grace)
    with rls.as_user(owner_id):
        deleted = await _adelete_temporary(conversation_id)
    await presence.aforget(conversation_id)
    if deleted:
        logger.info("temporary conversation %s deleted: its last socket closed", conversation_id)


def delete_temporary(conversation_id: Any) -> bool:
    """Delete a temporary conversation if it still exists; say whether it did."""
    with transaction.atomic():
        found = Conversation.objects.filter(pk=conversation_id, temporary=True).first()
        if found is None:
            return False
        services.delete_conversation(conversation=found)
    return True


_adelete_temporary = db_async(delete_temporary)


@rls.maintenance()  # every user's temporary conversations
def purge_expired_temporary(*, now: Any = None, dry_run: bool = False) -> int:
    """Delete temporary conversations whose last message (or, with none, creation) is a
    day old or more; return how many."""
    cutoff = (now or timezone.now()) - KEPT_AFTER_LAST_MESSAGE
    expired = Conversation.objects.filter(temporary=True).filter(
        Q(last_message_at__lt=cutoff) | Q(last_message_at__isnull=True, created_at__lt=cutoff)
    )
    if dry_run:
        return expired.count()
    purged = 0
    while batch := list(expired.order_by("created_at", "id")[:PURGE_BATCH]):
        with transaction.atomic():
            for conversation in batch:
                services.delete_conversation(conversation=conversation)
        purged += len(batch)
    return purged
