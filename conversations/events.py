"""Realtime fan-out: every event leaves from here, after the transaction commits."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)


def conversation_group(conversation_id: Any) -> str:
    """Name the channel-layer group of one conversation's sockets."""
    return f"conv.{conversation_id}"


def user_group(user_id: Any) -> str:
    """Name the channel-layer group of one user's list pages."""
    return f"user.{user_id}"


def _group_send(group: str, event: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group, event)
    except Exception:  # a realtime hiccup must never undo a stored write
        logger.exception("realtime event to %s failed", group)


def send_on_commit(groups: list[str], frame: dict[str, Any]) -> None:
    """Send `frame` to the sockets of `groups` once the current transaction commits."""
    event = {"type": "chat.frame", "frame": frame}

    def send() -> None:
        for group in groups:
            _group_send(group, event)

    transaction.on_commit(send)
