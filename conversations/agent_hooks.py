"""Keep the agent's checkpointed threads in step with conversation rows."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

logger = logging.getLogger(__name__)


def drop_thread_on_commit(conversation_id: Any) -> None:
    """Delete the agent thread of a conversation once its deletion commits."""

    def drop() -> None:
        try:
            from .agent_service import delete_agent_thread
        except ImportError:  # the agent is not wired in yet
            return
        try:
            delete_agent_thread(str(conversation_id))
        except Exception:
            logger.exception("could not delete agent thread %s", conversation_id)

    transaction.on_commit(drop)
