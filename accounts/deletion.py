"""Staff delete users in the admin: audited, with everything that goes with them.

A user's conversations go as a person deleting them would (their sockets told, their agent
threads dropped: `conversations.services.delete_conversation`); the rest of their rows
(documents, tokens, presets, usage) cascade with the user, and their memories (kept in the
LangGraph store) are deleted one by one. One audit entry
per user names what went with them (issue 55: a staff action that destroys users' data is
audited, cascades included).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction

from audit.models import AuditEntry
from audit.services import record


@transaction.atomic
def delete_users(*, staff: Any, users: Iterable[Any]) -> int:
    """Delete `users`, each with one `user.deleted` audit entry; return how many."""
    from conversations.models import Conversation, Message
    from conversations.services import delete_conversation
    from knowledge.models import Document
    from memories.services import delete_memory, list_memories

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
            delete_conversation(conversation=conversation)
        for memory in memories:  # kept in the LangGraph store, not in a table that cascades
            delete_memory(user_id=user.pk, memory_id=memory["id"])
        user.delete()
        deleted += 1
    return deleted
