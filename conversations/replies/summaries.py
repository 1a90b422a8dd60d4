"""The conversation-level summary: main points, decisions, next actions (SPEC, seed 004)."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from agent.digest import Digest, summarize_conversation
from core.errors import BudgetExceeded, Invalid, LlmUnavailable
from core.models_on_offer import amodel_in_force
from usage import services as usage_services

from .. import events, selectors
from ..models import Conversation, Message
from ..services import lock_conversation
from ..tree import branch_tail
from .turns import aconversation_config, build_agent_config

logger = logging.getLogger(__name__)

DEFAULT_MAX_WORDS = 500
MIN_WORDS, MAX_WORDS = 10, 2000
# The summarizer sees at most this many of the latest messages (the model's window is finite).
MAX_MESSAGES_SUMMARIZED = 400
# An automatic summary rolls (the last one + the messages since) when the message the last
# one reached is among the branch's newest ROLLING_WINDOW; else it is written anew.
ROLLING_WINDOW = 100


def _auto_thresholds() -> tuple[int, int, int]:
    return (
        settings.CHAT_AUTO_SUMMARY_MESSAGES,
        settings.CHAT_AUTO_SUMMARY_TOKENS,
        settings.CHAT_AUTO_SUMMARY_EVERY,
    )


def clean_max_words(max_words: Any) -> int:
    """Return the requested summary length in words, or refuse it."""
    if max_words is None:
        return DEFAULT_MAX_WORDS
    if isinstance(max_words, bool) or not isinstance(max_words, int):
        raise Invalid(_("max_length must be a whole number of words."))
    if not MIN_WORDS <= max_words <= MAX_WORDS:
        raise Invalid(
            _("max_length must be between %(min)s and %(max)s words.")
            % {"min": MIN_WORDS, "max": MAX_WORDS}
        )
    return max_words


def latest_messages(*, conversation_id: Any, limit: int = MAX_MESSAGES_SUMMARIZED) -> list[Message]:
    """Return the latest `limit` messages of the current branch (what the user sees),
    oldest first."""
    conversation = Conversation.objects.filter(pk=conversation_id).first()
    if conversation is None:
        return []
    # The branch's tail alone: reading the whole tree made each summary slower than the last.
    ids = branch_tail(conversation, limit)
    return list(Message.objects.filter(pk__in=ids).order_by("sequence_number"))


def to_summarize(conversation: Conversation, *, rolling: bool) -> tuple[list[Message], str]:
    """Return the messages to summarize and the summary they continue ("": none).

    Rolling, they are the branch's messages after the one the stored summary reached, so
    the summary's cost does not grow with the conversation; the stored summary is not
    continued when that message is not on the branch among its newest (another branch was
    chosen, it was deleted, or too much came since): then the latest messages, anew.
    """
    through = conversation.summary_through_id
    if rolling and conversation.summary and through is not None:
        ids = branch_tail(conversation, ROLLING_WINDOW)
        if through in ids[:-1]:
            since = ids[ids.index(through) + 1 :]
            messages = Message.objects.filter(pk__in=since).order_by("sequence_number")
            return list(messages), conversation.summary
    return latest_messages(conversation_id=conversation.pk), ""


@transaction.atomic
def store_summary(*, conversation_id: Any, summary: str, through: Any = None) -> Conversation:
    """Save a summary with its time and the newest message it covers; an active
    conversation becomes `summarized`."""
    conversation = lock_conversation(conversation_id)
    conversation.summary = summary.strip()
    conversation.summary_at = timezone.now()
    conversation.summary_through_id = through
    fields = ["summary", "summary_at", "summary_through", "updated_at"]
    # An archived conversation stays archived: archiving is the user's filing decision.
    if conversation.status == Conversation.Status.ACTIVE:
        conversation.status = Conversation.Status.SUMMARIZED
        fields.append("status")
    conversation.save(update_fields=fields)
    events.send_conversation_on_commit(conversation)
    return conversation


async def asummarize_conversation(
    *, conversation: Conversation, max_words: int | None = None, rolling: bool = False
) -> Conversation:
    """Summarize a conversation in its language and store the summary.

    Asked for (the Summarize button), it is written anew from the latest messages; an
    automatic one (`rolling`) continues the last summary with what was said since."""
    words = clean_max_words(max_words)
    messages, previous = await sync_to_async(to_summarize)(conversation, rolling=rolling)
    if not messages:
        raise Invalid(_("There is nothing to summarize yet."))
    # A summary is a model call its owner causes: refused past the budget, and counted.
    await sync_to_async(_check_owner_budget)(conversation.created_by_id)
    try:
        text = await asummarize_for_conversation(
            messages=messages, max_words=words, conversation=conversation, previous=previous
        )
    except Exception as exc:
        logger.warning("summary of %s failed: %s", conversation.pk, exc)
        raise LlmUnavailable(_("The model did not answer; nothing was changed.")) from None
    return await sync_to_async(store_summary)(
        conversation_id=conversation.id, summary=text, through=messages[-1].pk
    )


@transaction.atomic
def _check_owner_budget(owner_id: Any) -> None:
    owner = get_user_model().objects.get(pk=owner_id)
    usage_services.check_budget(
        user=owner, reserved=lambda: selectors.held_by_running_replies(owner)
    )


def is_past_auto_summary_thresholds(conversation: Conversation) -> bool:
    """Say whether a conversation has more messages or tokens than auto-summary waits for."""
    max_messages, max_tokens, _ = _auto_thresholds()
    return conversation.message_count > max_messages or conversation.total_tokens_used > max_tokens


def needs_auto_summary(conversation: Conversation) -> bool:
    """Say whether a conversation is past the automatic-summary thresholds and stale."""
    _, _, every = _auto_thresholds()
    if not is_past_auto_summary_thresholds(conversation):
        return False
    if conversation.summary_at is None:
        return True
    # Counted up to `every` only, through (conversation, created_at): a count of every newer
    # message read the whole conversation once the summary was old.
    newer = conversation.messages.filter(created_at__gt=conversation.summary_at).order_by()
    return newer[:every].count() >= every


def _load_if_due(conversation_id: Any) -> Conversation | None:
    conversation = Conversation.objects.filter(pk=conversation_id).first()
    if conversation is None or not needs_auto_summary(conversation):
        return None
    return conversation


async def maybe_auto_summarize(
    conversation_id: Any, *, current: Conversation | None = None
) -> Conversation | None:
    """Summarize a conversation past 50 messages or 10,000 tokens; call after each reply.

    Re-summarizes once enough new messages arrived since the last summary. Never raises:
    a failed summary is logged and retried after the next reply. `current`, the row as
    the caller just wrote it, spares a query while the conversation is still short.
    """
    if current is not None and not is_past_auto_summary_thresholds(current):
        return None
    conversation = await sync_to_async(_load_if_due)(conversation_id)
    if conversation is None:
        return None
    try:
        return await asummarize_conversation(conversation=conversation, rolling=True)
    except BudgetExceeded:
        return None  # its owner's budget is used up: no model call on their behalf
    except Exception:
        logger.exception("automatic summary of %s failed", conversation_id)
        return None


async def asummarize_digest(
    *,
    messages: list[Message],
    max_words: int | None = None,
    conversation: Conversation | None = None,
    previous: str = "",
) -> Digest:
    """Return the three parts (main points, decisions, next actions) of `messages`,
    written by the conversation's model (continuing the summary `previous`)."""
    turns = [(m.role, m.content) for m in messages if m.role in ("user", "assistant")]
    if conversation is not None:
        config, _instructions = await aconversation_config(conversation)
    else:
        config = build_agent_config(await amodel_in_force())
    digest = await summarize_conversation(
        config, turns, max_words=max_words or 200, previous=previous
    )
    if conversation is not None and "usage" in digest:  # the model was called: usage
        await sync_to_async(usage_services.record_usage)(
            user_id=conversation.created_by_id,
            conversation_id=conversation.pk,
            model=config.model,
            tokens=digest["usage"],
            at=timezone.now(),
        )
    return digest


async def asummarize_for_conversation(
    *,
    messages: list[Message],
    max_words: int | None = None,
    conversation: Conversation | None = None,
    previous: str = "",
) -> str:
    """Return a three-part summary of `messages` as Markdown (continuing `previous`)."""
    digest = await asummarize_digest(
        messages=messages, max_words=max_words, conversation=conversation, previous=previous
    )
    return digest["text"]
