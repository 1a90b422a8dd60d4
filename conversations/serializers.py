"""Rows as the JSON that the API, websocket frames and exports share (SPEC)."""

from __future__ import annotations

from typing import Any

from .models import Conversation, Message
from .tree import sibling_ids


def _iso(value: Any) -> str | None:
    return value.isoformat() if value else None


def _id(value: Any) -> str | None:
    return str(value) if value else None


def conversation_to_dict(conversation: Conversation) -> dict[str, Any]:
    """Return a conversation's model fields as JSON, ids for its links."""
    return {
        "id": str(conversation.id),
        "title": conversation.title,
        "description": conversation.description,
        "project_id": conversation.project_id,
        "service_id": conversation.service_id,
        "status": conversation.status,
        "summary": conversation.summary,
        "summary_at": _iso(conversation.summary_at),
        "parent_conversation_id": _id(conversation.parent_conversation_id),
        "forked_from_message_id": _id(conversation.forked_from_message_id),
        "message_count": conversation.message_count,
        "total_tokens_used": conversation.total_tokens_used,
        "created_by": conversation.created_by_id,
        "created_at": _iso(conversation.created_at),
        "updated_at": _iso(conversation.updated_at),
        "last_message_at": _iso(conversation.last_message_at),
        "current_message_id": _id(conversation.current_message_id),
        "model": conversation.model,
        "system_prompt": conversation.system_prompt,
        "temperature": conversation.temperature,
        "pinned": conversation.pinned,
        "temporary": conversation.temporary,
        "is_flagged": conversation.is_flagged,
        "flag_reason": conversation.flag_reason,
    }


def attachment_to_dict(attachment: Any) -> dict[str, Any]:
    """An attachment as message JSON carries it (SPEC "Attachments")."""
    return {
        "id": str(attachment.id),
        "name": attachment.name,
        "kind": attachment.kind,
        "content_type": attachment.content_type,
        "size_bytes": attachment.size_bytes,
        "url": f"/api/v1/attachments/{attachment.id}",
    }


def message_to_dict(message: Message) -> dict[str, Any]:
    """Return a message's model fields as JSON, its conversation as an id.

    `sibling_ids` come from the caller (`tree.with_siblings`, one query for a list);
    a message read without them asks the database (sync code only).
    """
    siblings = getattr(message, "sibling_ids", None)
    if siblings is None:
        siblings = sibling_ids(message)
    return {
        "id": str(message.id),
        "conversation_id": str(message.conversation_id),
        "role": message.role,
        "content": message.content,
        "parts": message.parts,
        "model": message.model,
        "tokens_used": message.tokens_used,
        "finish_reason": message.finish_reason or None,
        "metadata": message.metadata,
        "sequence_number": message.sequence_number,
        "parent_id": _id(message.parent_id),
        "sibling_ids": siblings,
        "run_id": _id(message.run_id),
        "client_id": message.client_id,
        "created_by": message.created_by_id,
        "created_at": _iso(message.created_at),
        "is_flagged": message.is_flagged,
        # The requesting user's rating (read by selectors.with_feedback; a message just
        # written has none).
        "feedback": getattr(message, "my_feedback", None),
        # Read with the message (selectors.for_display, or the send that attached them).
        "attachments": getattr(message, "attachment_list", []),
    }
