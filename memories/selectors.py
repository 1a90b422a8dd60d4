"""What the memory page reads beside the memories: where each one came from."""

from __future__ import annotations

from typing import Any

from django.apps import apps

from core.ids import parse_uuid

SOURCE_WORDS = 80  # characters of the message a memory was saved from


def sources_of(*, user: Any, memories: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Return {memory id: {"title", "words"}}: the title of the conversation a memory came
    from and the first words of its message, for those still the user's.

    Read by name: memories sit below conversations/, which saves them (as usage/ does)."""
    conversation = apps.get_model("conversations", "Conversation")
    message = apps.get_model("conversations", "Message")

    def wanted(key: str) -> set[Any]:
        found = (parse_uuid((m.get("source") or {}).get(key)) for m in memories)
        return {pk for pk in found if pk is not None}

    titles = {
        str(pk): title or ""
        for pk, title in conversation.objects.filter(
            pk__in=wanted("conversation_id"), created_by_id=user.pk
        ).values_list("pk", "title")
    }
    words = {
        str(pk): " ".join(text[: SOURCE_WORDS * 2].split())[:SOURCE_WORDS]
        for pk, text in message.objects.filter(
            pk__in=wanted("message_id"), conversation__created_by_id=user.pk
        ).values_list("pk", "content")
    }
    return {
        m["id"]: {
            "title": titles.get(str((m.get("source") or {}).get("conversation_id"))),
            "words": words.get(str((m.get("source") or {}).get("message_id"))),
        }
        for m in memories
    }
