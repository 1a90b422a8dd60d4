"""Writes. Each one validates, changes rows in one transaction, then sends its event."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from . import events
from .errors import Invalid, NotFound, TooLarge
from .models import TITLE_MAX_LENGTH, Conversation, Message, Project
from .serializers import conversation_to_dict, message_to_dict

EDITABLE_FIELDS = {"title", "description", "status", "project", "service_id"}
DESCRIPTION_MAX_LENGTH = 10_000
SERVICE_ID_MAX_LENGTH = 100
CLIENT_ID_MAX_LENGTH = 100
AUTO_TITLE_MAX_LENGTH = 60


def _clean_title(title: Any) -> str:
    if not isinstance(title, str):
        raise Invalid("Title must be a string.")
    title = " ".join(title.split())
    if len(title) > TITLE_MAX_LENGTH:
        raise Invalid(f"Title is longer than {TITLE_MAX_LENGTH} characters.")
    return title


def _clean_text(value: Any, *, field: str, max_length: int) -> str:
    if not isinstance(value, str):
        raise Invalid(f"{field} must be a string.")
    if len(value) > max_length:
        raise Invalid(f"{field} is longer than {max_length} characters.")
    return value


def _clean_project(*, user: Any, project: Any) -> Project | None:
    if project is None or project == "":
        return None
    if isinstance(project, Project):
        if project.owner_id != user.pk:
            raise NotFound("Project not found.")
        return project
    from .selectors import get_project_for_user

    return get_project_for_user(user=user, project_id=project)


def _announce_conversation(conversation: Conversation) -> None:
    frame = {"type": "conversation.updated", "conversation": conversation_to_dict(conversation)}
    events.send_on_commit(
        [events.conversation_group(conversation.id), events.user_group(conversation.created_by_id)],
        frame,
    )


async def aannounce_message(message: Message) -> None:
    """Tell the conversation's sockets and its owner's lists about a message just stored.

    For writers on the server loop, which already hold the rows: unlike the on-commit
    announcement of `append_message`, no database thread waits on the channel layer.
    """
    conversation = message.conversation
    await events.asend(
        [events.conversation_group(conversation.id)],
        {"type": "message.created", "message": message_to_dict(message)},
    )
    frame = {"type": "conversation.updated", "conversation": conversation_to_dict(conversation)}
    owner = events.user_group(conversation.created_by_id)
    await events.asend([events.conversation_group(conversation.id), owner], frame)


@transaction.atomic
def create_conversation(
    *,
    user: Any,
    title: str = "",
    description: str = "",
    project: Any = None,
    service_id: str = "",
) -> Conversation:
    """Create a conversation owned by `user`."""
    conversation = Conversation.objects.create(
        created_by=user,
        title=_clean_title(title),
        description=_clean_text(
            description, field="Description", max_length=DESCRIPTION_MAX_LENGTH
        ),
        project=_clean_project(user=user, project=project),
        service_id=_clean_text(service_id, field="service_id", max_length=SERVICE_ID_MAX_LENGTH),
    )
    _announce_conversation(conversation)
    return conversation


@transaction.atomic
def update_conversation(*, conversation: Conversation, **changes: Any) -> Conversation:
    """Change title, description, status, project or service_id; validate all first."""
    unknown = set(changes) - EDITABLE_FIELDS
    if unknown:
        raise Invalid(f"Unknown field: {', '.join(sorted(unknown))}.")
    cleaned: dict[str, Any] = {}
    if "title" in changes:
        cleaned["title"] = _clean_title(changes["title"])
    if "description" in changes:
        cleaned["description"] = _clean_text(
            changes["description"], field="Description", max_length=DESCRIPTION_MAX_LENGTH
        )
    if "service_id" in changes:
        cleaned["service_id"] = _clean_text(
            changes["service_id"], field="service_id", max_length=SERVICE_ID_MAX_LENGTH
        )
    if "status" in changes:
        if changes["status"] not in Conversation.Status.values:
            raise Invalid(f"Unknown status; use one of: {', '.join(Conversation.Status.values)}.")
        cleaned["status"] = changes["status"]
    if "project" in changes:
        cleaned["project"] = _clean_project(
            user=conversation.created_by, project=changes["project"]
        )
    if cleaned.get("status") == Conversation.Status.ARCHIVED != conversation.status:
        cleaned["archived_at"] = timezone.now()
    elif "status" in cleaned and cleaned["status"] != Conversation.Status.ARCHIVED:
        cleaned["archived_at"] = None
    for field, value in cleaned.items():
        setattr(conversation, field, value)
    conversation.save(update_fields=[*cleaned, "updated_at"])
    _announce_conversation(conversation)
    return conversation


def archive_conversation(*, conversation: Conversation) -> Conversation:
    """Archive a conversation."""
    return update_conversation(conversation=conversation, status=Conversation.Status.ARCHIVED)


def rename_conversation(*, conversation: Conversation, title: str) -> Conversation:
    """Give a conversation a new title."""
    return update_conversation(conversation=conversation, title=title)


@transaction.atomic
def delete_conversation(*, conversation: Conversation) -> None:
    """Delete a conversation with its messages, and tell its sockets and list pages."""
    conversation_id, owner_id = conversation.id, conversation.created_by_id
    conversation.delete()
    events.send_on_commit(
        [events.conversation_group(conversation_id), events.user_group(owner_id)],
        {"type": "conversation.deleted", "conversation_id": str(conversation_id)},
    )
    from .agent_hooks import drop_thread_on_commit

    drop_thread_on_commit(conversation_id)


@dataclass(frozen=True)
class AppendResult:
    message: Message
    created: bool


def append_message(
    *,
    conversation_id: Any,
    role: str,
    content: str,
    created_by: Any = None,
    parts: list[dict[str, Any]] | None = None,
    model: str = "",
    tokens_used: int = 0,
    finish_reason: str = "",
    metadata: dict[str, Any] | None = None,
    client_id: str | None = None,
    message_id: uuid.UUID | str | None = None,
    created_at: datetime | None = None,
    announce: bool = True,
) -> AppendResult:
    """Store a message with the next sequence number and keep the counters true.

    Locks the conversation row, so concurrent writers get gap-free numbers and exact
    counters. A repeated `client_id` returns the stored message and creates nothing.
    """
    if role not in Message.Role.values:
        raise Invalid(f"Unknown role: {role}.")
    if not isinstance(content, str):
        raise Invalid("Content must be a string.")
    if role == Message.Role.USER and len(content) > settings.MESSAGE_MAX_CHARS:
        raise TooLarge(f"Message is longer than {settings.MESSAGE_MAX_CHARS} characters.")
    if client_id is not None:
        client_id = _clean_text(client_id, field="client_id", max_length=CLIENT_ID_MAX_LENGTH)
    with transaction.atomic():
        conversation = lock_conversation(conversation_id)
        if client_id:
            existing = conversation.messages.filter(client_id=client_id).first()
            if existing is not None:
                return AppendResult(existing, False)
        message = insert_message(
            conversation,
            role=role,
            content=content,
            created_by=created_by,
            parts=parts,
            model=model,
            tokens_used=tokens_used,
            finish_reason=finish_reason,
            metadata=metadata,
            client_id=client_id,
            message_id=message_id,
            created_at=created_at,
        )
        if announce:
            events.send_on_commit(
                [events.conversation_group(conversation.id)],
                {"type": "message.created", "message": message_to_dict(message)},
            )
            _announce_conversation(conversation)
    return AppendResult(message, True)


def insert_message(
    conversation: Conversation,
    *,
    role: str,
    content: str,
    created_by: Any = None,
    parts: list[dict[str, Any]] | None = None,
    model: str = "",
    tokens_used: int = 0,
    finish_reason: str = "",
    metadata: dict[str, Any] | None = None,
    client_id: str | None = None,
    message_id: uuid.UUID | str | None = None,
    created_at: datetime | None = None,
    also_save: tuple[str, ...] = (),
) -> Message:
    """Store a message with the next sequence number and save the conversation's counters.

    The caller has validated the input and holds the conversation's row lock
    (`lock_conversation` in a transaction). `also_save` names more conversation fields
    the caller changed, saved in the same UPDATE.
    """
    last = conversation.messages.aggregate(n=Max("sequence_number"))["n"] or 0
    message = Message.objects.create(
        id=message_id or uuid.uuid4(),
        conversation=conversation,
        role=role,
        content=content,
        parts=parts or [],
        model=model,
        tokens_used=max(0, int(tokens_used)),
        finish_reason=finish_reason,
        metadata=metadata or {},
        sequence_number=last + 1,
        client_id=client_id or None,
        created_by=created_by,
    )
    if created_at is not None:
        Message.objects.filter(pk=message.pk).update(created_at=created_at)
        message.created_at = created_at
    update_fields = ["message_count", "total_tokens_used", "last_message_at", "updated_at"]
    if role == Message.Role.USER and not conversation.title:
        # Like the chat apps people know: an untitled conversation takes its first words.
        conversation.title = title_from_text(content)
        update_fields.append("title")
    conversation.message_count += 1
    conversation.total_tokens_used += message.tokens_used
    conversation.last_message_at = max(
        filter(None, [conversation.last_message_at, message.created_at])
    )
    conversation.save(update_fields=[*update_fields, *also_save])
    return message


def title_from_text(text: str, *, limit: int = AUTO_TITLE_MAX_LENGTH) -> str:
    """Return the first words of `text` as a one-line title."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def lock_conversation(conversation_id: Any) -> Conversation:
    """Lock and return the conversation row; the caller holds a transaction."""
    try:
        return Conversation.objects.select_for_update().get(pk=conversation_id)
    except (Conversation.DoesNotExist, ValueError):
        raise NotFound("Conversation not found.") from None
