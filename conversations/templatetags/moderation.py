"""What the admin's index says about moderation."""

from __future__ import annotations

from django import template

from ..moderation import reported_messages

register = template.Library()


@register.simple_tag
def reported_message_count() -> int:
    """Return how many reported messages wait for a moderator."""
    return reported_messages().count()
