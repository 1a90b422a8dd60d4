"""Share links: a read-only snapshot of a conversation's current branch at /s/<token>/."""

from __future__ import annotations

import re
import secrets
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from core import rls
from core.errors import Conflict, NotFound
from core.ids import parse_uuid
from core.user_turns import hold_user

from .models import Message, Share
from .selectors import get_conversation_for_user
from .tree import Tree, current_branch

MAX_SHARES_PER_USER = 1000
TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")  # secrets.token_urlsafe's alphabet
# The public page shows at most this many messages of a snapshot (the newest are cut).
PAGE_MAX_MESSAGES = 2000


@transaction.atomic
def create_share(*, user: Any, conversation_id: Any) -> Share:
    """Snapshot the conversation's current branch as it is now; return its link row
    (a temporary conversation: 409 `temporary_conversation`)."""
    conversation = get_conversation_for_user(user=user, conversation_id=conversation_id)
    if conversation.temporary:
        raise Conflict(
            _("A temporary conversation cannot be shared."), code="temporary_conversation"
        )
    hold_user(user.pk)
    if Share.objects.filter(created_by=user).count() >= MAX_SHARES_PER_USER:
        raise Conflict(
            _("You have %(n)s share links; revoke some first.") % {"n": MAX_SHARES_PER_USER},
            code="too_many",
        )
    tree = Tree.of(conversation.pk)
    path = current_branch(conversation, tree)
    return Share.objects.create(
        conversation=conversation,
        created_by=user,
        token=secrets.token_urlsafe(24),
        title=conversation.title,
        message_ids=[str(pk) for pk in path],
    )


def list_shares(*, user: Any, conversation_id: Any = None) -> list[Share]:
    """Return the user's share links, newest first (of one conversation, when given)."""
    shares = Share.objects.filter(created_by=user).order_by("-created_at", "-id")
    if conversation_id is not None:
        conversation = get_conversation_for_user(user=user, conversation_id=conversation_id)
        shares = shares.filter(conversation=conversation)
    return list(shares)


@transaction.atomic
def revoke_share(*, user: Any, share_id: Any) -> None:
    """Delete the user's share link; its URL answers 404 from now on."""
    pk = parse_uuid(share_id)
    deleted = pk is not None and Share.objects.filter(pk=pk, created_by=user).delete()[0]
    if not deleted:
        raise NotFound(_("Share link not found."))


def shared_snapshot(token: str) -> tuple[Share, list[Message]]:
    """Return a live share link and the messages of its snapshot still there, in order;
    NotFound for a revoked or unknown token."""
    if not TOKEN.fullmatch(token):
        raise NotFound(_("This link does not exist or was revoked."))
    # Whoever opens the link reads, as the share role, this link and its snapshot only.
    with rls.share_reader(token):
        share = Share.objects.filter(token=token).first()
        if share is None:
            raise NotFound(_("This link does not exist or was revoked."))
        ids = share.message_ids[:PAGE_MAX_MESSAGES]
        rows = (
            Message.objects.filter(conversation_id=share.conversation_id, pk__in=ids)
            .only("id", "role", "content", "created_at", "sequence_number")
            .order_by("sequence_number")  # not the default's join to the conversation
        )
        return share, list(rows)
