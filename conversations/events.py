"""Realtime fan-out: every event leaves from here, after the transaction commits."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)


CONVERSATION_GROUP_PREFIX = "conv."


def conversation_group(conversation_id: Any) -> str:
    """Name the channel-layer group of one conversation's sockets."""
    return f"{CONVERSATION_GROUP_PREFIX}{conversation_id}"


def user_group(user_id: Any) -> str:
    """Name the channel-layer group of one user's list pages."""
    return f"user.{user_id}"


def _group_send(group: str, event: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group, {**event, "group": group})
    except Exception:  # a realtime hiccup must never undo a stored write
        logger.exception("realtime event to %s failed", group)


def send_now(groups: list[str], frame: dict[str, Any]) -> None:
    """Send `frame` to the sockets of `groups` (from sync code, outside the server loop).

    Conversation frames go through this process's realtime hub when the server runs
    here, so they reach local sockets in order with the reply's frames and other
    processes once; otherwise (a management command) through the channel layer.
    """
    from .realtime.hub import current_hub

    hub = current_hub()
    for group in groups:
        if hub is not None and group.startswith(CONVERSATION_GROUP_PREFIX):
            hub.post_threadsafe(group[len(CONVERSATION_GROUP_PREFIX) :], frame)
        else:
            _group_send(group, {"type": "chat.frame", "frame": frame})


async def asend(groups: list[str], frame: dict[str, Any]) -> None:
    """Send `frame` to the sockets of `groups` from async code (the twin of `send_now`)."""
    from .realtime.hub import current_hub

    hub = current_hub()
    if hub is not None and hub.loop is not asyncio.get_running_loop():
        hub = None
    layer = get_channel_layer()
    for group in groups:
        if hub is not None and group.startswith(CONVERSATION_GROUP_PREFIX):
            hub.post(group[len(CONVERSATION_GROUP_PREFIX) :], frame)
        elif layer is not None:
            try:
                event = {"type": "chat.frame", "frame": frame, "group": group}
                await layer.group_send(group, event)
            except Exception:  # a realtime hiccup must never undo a stored write
                logger.exception("realtime event to %s failed", group)


def send_on_commit(groups: list[str], frame: dict[str, Any]) -> None:
    """Send `frame` to the sockets of `groups` once the current transaction commits."""
    transaction.on_commit(lambda: send_now(groups, frame))
