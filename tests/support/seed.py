"""Rows for tests: messages written straight into a conversation, as an import would.

Production has one writer of new user messages (the reply orchestrator); tests that need
history put it in place with the same row-level insert the orchestrator uses.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from conversations import services
from conversations.models import Message


def add_message(*, conversation_id: Any, role: str, content: str, **fields: Any) -> Message:
    """Store one message with the next sequence number and true counters."""
    with transaction.atomic():
        conversation = services.lock_conversation(conversation_id)
        return services.insert_message(
            conversation, services.NewMessage(role=role, content=content, **fields)
        )
