"""Channel-layer group names (ASCII letters, digits, `-_.`, under 100 characters)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

CONVERSATION_GROUP_PREFIX = "conv."
USER_GROUP_PREFIX = "user."


def conversation_group(conversation_id: Any) -> str:
    """Name the group of one conversation's sockets."""
    return f"{CONVERSATION_GROUP_PREFIX}{conversation_id}"


def user_group(user_id: Any) -> str:
    """Name the group of one user's list pages."""
    return f"{USER_GROUP_PREFIX}{user_id}"


def conversation_of(group: str) -> str | None:
    """Return the conversation id a conversation group names, else None."""
    if group.startswith(CONVERSATION_GROUP_PREFIX):
        return group[len(CONVERSATION_GROUP_PREFIX) :]
    return None


def is_user_group(group: str) -> bool:
    """Say whether `group` names a user's list pages."""
    return group.startswith(USER_GROUP_PREFIX)


def layer_prefix(redis_url: str) -> str:
    """Name the channel layer's pub/sub channels after the Redis database in `redis_url`.

    Redis pub/sub ignores database numbers: without this, two sites (or test runs) on one
    Redis server, each in its own database, would hear each other's groups (`user.1` is
    every site's first user).
    """
    path = urlsplit(redis_url).path.strip("/")
    return f"chat{path if path.isdigit() else '0'}"
