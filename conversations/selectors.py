"""Reads. Every read is scoped to the requesting user (SPEC: Ownership)."""

from __future__ import annotations

import uuid
from typing import Any

from asgiref.sync import sync_to_async
from django.db.models import QuerySet

from .errors import NotFound
from .models import Conversation, Message, Project

NOT_FOUND_MESSAGE = "Conversation not found."


def parse_uuid(value: Any) -> uuid.UUID | None:
    """Return `value` as a UUID, or None when it is not one."""
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None


def get_conversation_for_user(*, user: Any, conversation_id: Any) -> Conversation:
    """Return the user's conversation; someone else's answers exactly like a missing one."""
    pk = parse_uuid(conversation_id)
    if pk is None or user is None or not user.is_authenticated:
        raise NotFound(NOT_FOUND_MESSAGE)
    try:
        return Conversation.objects.select_related("project", "parent_conversation").get(
            pk=pk, created_by=user
        )
    except Conversation.DoesNotExist:
        raise NotFound(NOT_FOUND_MESSAGE) from None


aget_conversation_for_user = sync_to_async(get_conversation_for_user)


def get_message_for_user(*, user: Any, message_id: Any) -> Message:
    """Return a message of one of the user's conversations, or raise NotFound."""
    pk = parse_uuid(message_id)
    if pk is None or user is None or not user.is_authenticated:
        raise NotFound("Message not found.")
    try:
        return Message.objects.select_related("conversation").get(
            pk=pk, conversation__created_by=user
        )
    except Message.DoesNotExist:
        raise NotFound("Message not found.") from None


def get_project_for_user(*, user: Any, project_id: Any) -> Project:
    """Return the user's project, or raise NotFound."""
    try:
        pk = int(project_id)
    except (TypeError, ValueError):
        raise NotFound("Project not found.") from None
    try:
        return Project.objects.get(pk=pk, owner=user)
    except Project.DoesNotExist:
        raise NotFound("Project not found.") from None


def list_messages(
    *,
    conversation: Conversation,
    after: int | None = None,
    before: int | None = None,
    limit: int = 50,
    newest: bool = False,
) -> list[Message]:
    """Return messages oldest first, optionally the newest `limit` of the range."""
    qs: QuerySet[Message] = conversation.messages.all()
    if after is not None:
        qs = qs.filter(sequence_number__gt=after)
    if before is not None:
        qs = qs.filter(sequence_number__lt=before)
    if newest:
        rows = list(qs.order_by("-sequence_number")[:limit])
        rows.reverse()
        return rows
    return list(qs.order_by("sequence_number")[:limit])


def list_projects(*, user: Any) -> list[Project]:
    """Return the user's projects by name."""
    return list(Project.objects.filter(owner=user).order_by("name"))


def list_recent_conversations(*, user: Any, limit: int = 50) -> list[Conversation]:
    """Return the user's conversations with the newest activity first."""
    return list(
        Conversation.objects.filter(created_by=user)
        .select_related("project")
        .order_by("-updated_at", "-id")[:limit]
    )


def list_forks(*, conversation: Conversation) -> list[dict[str, str]]:
    """Return the ids and titles of a conversation's direct forks, oldest first."""
    rows = conversation.forks.order_by("created_at", "id").values_list("id", "title")
    return [{"id": str(pk), "title": title} for pk, title in rows]


def search_messages_for_agent(
    *, user_id: int, query: str, exclude_conversation_id: Any, limit: int = 5
) -> list[dict[str, Any]]:
    """Return the user's messages in other conversations that mention `query`."""
    words = [w for w in query.split() if len(w) > 1][:5] or [query.strip()]
    rows = Message.objects.filter(conversation__created_by_id=user_id).exclude(
        conversation_id=exclude_conversation_id
    )
    for word in words:
        rows = rows.filter(content__icontains=word)
    rows = rows.select_related("conversation").order_by("-created_at")[:limit]
    return [
        {
            "conversation_id": str(m.conversation_id),
            "title": m.conversation.title,
            "snippet": m.content[:300],
            "role": m.role,
            "content": m.content[:500],
            "created_at": m.created_at.isoformat(),
        }
        for m in rows
    ]
