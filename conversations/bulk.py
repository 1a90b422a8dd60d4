"""Operations on several selected conversations at once; all or nothing on ownership."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core import rls
from core.errors import Invalid, NotFound
from core.ids import parse_uuid

from . import services
from .models import Conversation
from .selectors import owned_by

MAX_SELECTED = 500


def get_selected_conversations(
    *, user: Any, ids: list[Any], lock: bool = False
) -> list[Conversation]:
    """Return the user's conversations named by `ids`; any missing or foreign id is 404.

    `lock` takes their row locks (in id order, so two bulk operations never wait on
    each other in a circle); the caller holds a transaction.
    """
    if not ids:
        raise Invalid(_("Select at least one conversation."))
    if len(ids) > MAX_SELECTED:
        raise Invalid(_("Select at most %(n)s conversations.") % {"n": MAX_SELECTED})
    pks = {parse_uuid(value) for value in ids}
    if None in pks:
        raise NotFound(_("Conversation not found."))
    selected = owned_by(user).filter(pk__in=pks)
    if lock:
        rows = list(selected.order_by("pk").select_for_update())
    else:
        rows = list(selected.order_by("-updated_at"))
    if len(rows) != len(pks):
        raise NotFound(_("Conversation not found."))
    return rows


def archive_conversations(*, user: Any, ids: list[Any]) -> int:
    """Archive the selected conversations; return how many."""
    return _each_selected(user, ids, services.archive_conversation)


def delete_conversations(*, user: Any, ids: list[Any]) -> int:
    """Delete the selected conversations (and their agent threads); return how many."""
    return _each_selected(user, ids, services.delete_conversation)


@transaction.atomic
def _each_selected(user: Any, ids: list[Any], action: Callable[..., Any]) -> int:
    """Lock the selection (all or nothing: NotFound), act on each; return how many."""
    rows = get_selected_conversations(user=user, ids=ids, lock=True)
    for conversation in rows:
        action(conversation=conversation)
    return len(rows)


@rls.maintenance()  # retention runs over every user's conversations
def purge_archived_conversations(
    *, days: int | None = None, now: Any = None, dry_run: bool = False
) -> int:
    """Delete conversations archived more than `days` ago; return how many.

    `days` defaults to settings.CHAT_RETENTION_ARCHIVED_DAYS; 0 or less keeps everything.
    """
    days = settings.CHAT_RETENTION_ARCHIVED_DAYS if days is None else days
    if days <= 0:
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=days)
    expired = Conversation.objects.filter(
        status=Conversation.Status.ARCHIVED, archived_at__lt=cutoff
    ).order_by("archived_at")
    if dry_run:
        return expired.count()
    purged = 0
    while batch := list(expired[:200]):
        with transaction.atomic():
            for conversation in batch:
                services.delete_conversation(conversation=conversation)
        purged += len(batch)
    return purged
