"""Staff moderation: the reported messages with their context, and what staff do about
them (dismiss, delete) and about whole conversations; every step is audited.

Runs in the admin's maintenance scope (every user's rows); the access check is the
admin's (staff with the model's permissions).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, QuerySet, Subquery
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import AuditEntry
from audit.services import record
from core.errors import NotFound
from core.ids import parse_uuid
from knowledge.models import Document
from memories.services import delete_memory, list_memories

from . import branches, services
from .models import Conversation, Message
from .tree import Tree, current_branch

# Message.metadata key: when the owner reported it (ISO 8601), for the queue's order.
REPORTED_AT = "reported_at"


# --- reads ------------------------------------------------------------------------------
def reported_messages() -> QuerySet[Message]:
    """Return the reported messages, most recently reported first."""
    return (
        Message.objects.filter(is_flagged=True)
        .select_related("conversation", "conversation__created_by")
        # Reports older than the note of when (none) last, not first as NULLs sort DESC.
        .order_by(KT(f"metadata__{REPORTED_AT}").desc(nulls_last=True), "-created_at")
    )


def with_reported_counts(queryset: QuerySet[Conversation]) -> QuerySet[Conversation]:
    """Annotate each conversation with `reported_count`, its reported messages."""
    # A subquery per row shown, not a join and GROUP BY over every conversation.
    counts = (
        Message.objects.filter(conversation=OuterRef("pk"), is_flagged=True)
        .order_by()
        .values("conversation")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return queryset.annotate(reported_count=Coalesce(Subquery(counts), 0))


def has_reported_messages() -> Exists:
    """Return the condition "the conversation has a reported message"."""
    return Exists(Message.objects.filter(conversation=OuterRef("pk"), is_flagged=True))


@dataclass(frozen=True)
class Report:
    """A reported message with the messages before and after it on its branch."""

    message: Message
    before: Message | None
    after: Message | None

    @property
    def reported_at(self) -> datetime | None:
        """When the owner reported it (None for a report older than this note)."""
        try:
            return datetime.fromisoformat(self.message.metadata.get(REPORTED_AT, ""))
        except (TypeError, ValueError):
            return None


def _after(message: Message, tree: Tree, branch: set[uuid.UUID]) -> uuid.UUID | None:
    """The child that continues the message's branch: the shown one, else the newest."""
    children = tree.children.get(message.pk, [])
    shown = [c for c in children if c in branch]
    return (shown or children[-1:] or [None])[0]


def in_context(messages: list[Message]) -> list[Report]:
    """Give each reported message its neighbours on its branch (a tree per conversation)."""
    trees: dict[Any, tuple[Tree, set[uuid.UUID]]] = {}
    wanted: dict[Message, tuple[Any, Any]] = {}
    for message in messages:
        if message.conversation_id not in trees:
            tree = Tree.of(message.conversation_id)
            trees[message.conversation_id] = (tree, set(current_branch(message.conversation, tree)))
        tree, branch = trees[message.conversation_id]
        wanted[message] = (tree.parent.get(message.pk), _after(message, tree, branch))
    ids = {pk for pair in wanted.values() for pk in pair if pk is not None}
    found = Message.objects.in_bulk(ids)
    return [Report(m, found.get(before), found.get(after)) for m, (before, after) in wanted.items()]


def get_reported_message(message_id: Any) -> Message:
    """Return a reported message, or raise NotFound (also for one dismissed meanwhile)."""
    pk = parse_uuid(message_id)
    message = reported_messages().filter(pk=pk).first() if pk else None
    if message is None:
        raise NotFound(_("Message not found."))
    return message


# --- writes -----------------------------------------------------------------------------
def mark_reported(message: Message) -> None:
    """Note when the message was reported (the caller saves `metadata`)."""
    message.metadata = {**message.metadata, REPORTED_AT: timezone.now().isoformat()}


def _facts(message: Message) -> dict[str, Any]:
    conversation = message.conversation
    return {
        "conversation_id": str(conversation.pk),
        "conversation": str(conversation)[:200],
        "owner": conversation.created_by.get_username(),
        "role": message.role,
        "reason": message.flag_reason,
        "reported_at": message.metadata.get(REPORTED_AT, ""),
    }


@transaction.atomic
def dismiss_report(*, staff: Any, message_id: Any) -> Message:
    """Clear a message's report, keeping the message; audited as `report.dismissed`."""
    pk = parse_uuid(message_id)
    locked = reported_messages().select_for_update(of=("self",)).filter(pk=pk)
    message = locked.first() if pk else None
    if message is None:  # never reported, deleted, or another moderator dismissed it first
        raise NotFound(_("Message not found."))
    facts = _facts(message)
    message.is_flagged, message.flag_reason = False, ""
    message.metadata = {k: v for k, v in message.metadata.items() if k != REPORTED_AT}
    message.save(update_fields=["is_flagged", "flag_reason", "metadata"])
    record(actor=staff, action=AuditEntry.Action.REPORT_DISMISSED, target=message, detail=facts)
    return message


@transaction.atomic
def delete_message(*, staff: Any, message_id: Any) -> Conversation:
    """Delete a message and its subtree as its owner would (the agent's branch memory
    follows); audited as `message.deleted` with how many messages went."""
    pk = parse_uuid(message_id)
    message = (
        Message.objects.select_related("conversation__created_by").filter(pk=pk).first()
        if pk
        else None
    )
    if message is None:
        raise NotFound(_("Message not found."))
    facts = _facts(message)
    before = message.conversation.message_count
    owner = message.conversation.created_by
    conversation = branches.delete_message(user=owner, message_id=message.pk)
    facts["messages_deleted"] = before - conversation.message_count
    record(actor=staff, action=AuditEntry.Action.MESSAGE_DELETED, target=message, detail=facts)
    return conversation


@transaction.atomic
def delete_conversation(*, staff: Any, conversation: Conversation) -> None:
    """Delete a user's conversation; audited as `conversation.deleted`."""
    detail = {
        "owner": conversation.created_by.get_username(),
        "messages": conversation.message_count,
    }
    record(
        actor=staff,
        action=AuditEntry.Action.CONVERSATION_DELETED,
        target=conversation,
        detail=detail,
    )
    services.delete_conversation(conversation=conversation)


@transaction.atomic
def delete_users(*, staff: Any, users: Iterable[Any]) -> int:
    """Delete `users` (staff in the admin), each with one `user.deleted` audit entry naming
    what went with them; return how many.

    A user's conversations go as a person deleting them would (their sockets told, their
    agent threads dropped: `services.delete_conversation`); their memories, kept in the
    LangGraph store, are deleted one by one; the rest of their rows (documents, tokens,
    presets, usage) cascade with the user.
    """
    deleted = 0
    for user in users:
        conversations = list(Conversation.objects.filter(created_by=user))
        memories = list_memories(user_id=user.pk)
        detail = {
            "username": user.get_username(),
            "email": user.email,
            "was_staff": bool(user.is_staff),
            "conversations": len(conversations),
            "messages": Message.objects.filter(conversation__created_by=user).count(),
            "documents": Document.objects.filter(owner=user).count(),
            "memories": len(memories),
        }
        record(actor=staff, action=AuditEntry.Action.USER_DELETED, target=user, detail=detail)
        for conversation in conversations:
            services.delete_conversation(conversation=conversation)
        for memory in memories:
            delete_memory(user_id=user.pk, memory_id=memory["id"])
        user.delete()
        deleted += 1
    return deleted
