"""Model-written titles: an untitled conversation is named after its first exchange."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction

from agent.titles import write_title

from .. import events
from ..models import Conversation, Message
from ..services import lock_conversation
from . import turns

logger = logging.getLogger(__name__)

TITLED_REPLIES = (Message.FinishReason.END_TURN, Message.FinishReason.MAX_TOKENS)


def wants_model_title(conversation: Conversation, question: Message | None, reply: Message) -> bool:
    """Say whether this reply should have the model name its conversation: the first
    exchange of a conversation still titled by its first words, answered by a real model."""
    return (
        bool(settings.OPENAI_API_KEY)  # the offline model keeps the first-words title
        and conversation.title_source == Conversation.TitleSource.FIRST_WORDS
        and question is not None
        and question.parent_id is None
        and reply.finish_reason in TITLED_REPLIES
        and bool(reply.content.strip())
    )


@transaction.atomic
def store_model_title(*, conversation_id: Any, title: str) -> Conversation | None:
    """Save a model-written title unless the user titled the conversation meanwhile."""
    conversation = lock_conversation(conversation_id)
    if conversation.title_source != Conversation.TitleSource.FIRST_WORDS:
        return None
    conversation.title = title
    conversation.title_source = Conversation.TitleSource.MODEL
    conversation.save(update_fields=["title", "title_source", "updated_at"])
    events.send_conversation_on_commit(conversation)
    return conversation


async def awrite_model_title(
    *, conversation: Conversation, question: Message, reply: Message
) -> Conversation | None:
    """Have the conversation's model title it (`conversation.updated` announces it).

    Never raises: without a usable title the first words stay.
    """
    try:
        config, _instructions = await turns.aconversation_config(conversation)
        title = await write_title(config, question=question.content, answer=reply.content)
    except Exception as exc:
        logger.warning("title of %s not written: %s", conversation.pk, exc)
        return None
    if not title:
        return None
    try:
        return await sync_to_async(store_model_title)(conversation_id=conversation.pk, title=title)
    except Exception:
        logger.exception("title of %s not stored", conversation.pk)
        return None
