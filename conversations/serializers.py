"""Rows as the JSON that the API, websocket frames and exports share (SPEC)."""

from __future__ import annotations

from typing import Any

from .models import Conversation, Message
from .schemas import ConversationOut, as_json
from .steps import fault_text
from .tree import sibling_ids


def _iso(value: Any) -> str | None:
    return value.isoformat() if value else None


def _id(value: Any) -> str | None:
    return str(value) if value else None


def _metadata(message: Message) -> dict[str, Any]:
    """Return a message's metadata, a failed reply's `error.message` in the reader's
    language (SPEC "Failures named": the words of the step that says why, translated)."""
    metadata = message.metadata
    error = metadata.get("error") if isinstance(metadata, dict) else None
    if not isinstance(error, dict):
        return metadata
    said = fault_text(message.parts)
    return {**metadata, "error": {**error, "message": said}} if said else metadata


# Where a field's value is not the attribute of the same name.
_ATTRIBUTES = {"created_by": "created_by_id"}


def conversation_to_dict(conversation: Conversation) -> dict[str, Any]:
    """Return a conversation as `schemas.ConversationOut` lists it, ids for its links."""
    return {
        name: as_json(getattr(conversation, _ATTRIBUTES.get(name, name)))
        for name in ConversationOut.model_fields
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
        "metadata": _metadata(message),
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
