"""Database side of a reply run: claim the slot, beat, store the reply, recover, sync.

Sync functions with transactions (`select_for_update` needs them); the orchestrator
reaches them through `core.db_async`. Every change of a run's status happens under its
conversation's row lock, so a claim, a finish and a recovery never interleave.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core import rows
from core.errors import Conflict, Invalid, NotFound
from core.ids import parse_uuid
from usage import services as usage

from .. import attachments, selectors, services, tree
from ..models import Conversation, Message, ReplyRun
from ..selectors import access_conversation, get_message_for_user
from .ask import Ask

# Replies that stopped before their end: the ones a user may continue.
CUT_OFF = {"max_tokens", "stopped", "error", "interrupted"}

SYNC_PAGE_MESSAGES = 200  # per `sync.state`; `has_more` asks for the next page


class Busy(Conflict):
    """A reply is already running in the conversation (maybe in a process that died)."""

    def __init__(self, run: ReplyRun) -> None:
        super().__init__(_("A reply is already running in this conversation."), code="busy")
        self.run = run


@dataclass(frozen=True)
class Claim:
    conversation: Conversation  # annotated with owner_has_documents
    user_message: Message  # the message the reply answers (new for send and edit)
    created: bool  # False: the client_id was seen before and nothing was stored
    run: ReplyRun | None  # the run answering the message (None: an imported message)
    reply: Message | None  # that run's stored reply, once it is stored
    # The agent's memory for the turn is the branch down to this message (None: empty);
    # for a continue it is the cut-off reply itself.
    resume_after: Message | None = None
    continues: Message | None = None  # the cut-off reply a continue goes on from
    partner: ReplyRun | None = None  # side by side: the run of the second model (lane 1)


@dataclass(frozen=True)
class Finished:
    conversation: Conversation  # as written with the reply
    message: Message
    question: Message | None  # the message the reply answers
    stored_now: bool = True  # False: another process had already stored (and announced) it


@dataclass(frozen=True)
class SyncRows:
    """What `sync` reads from the database."""

    messages: list[Message]
    has_more: bool
    stored: set[str]  # which of the replies in progress asked about are messages already
    current_message_id: Any


@dataclass(frozen=True)
class Reply:
    """What a run produced, to be stored as its assistant message."""

    content: str
    finish_reason: str
    parts: list[dict[str, Any]]
    model: str = ""
    tokens_used: int | None = None
    metadata: dict[str, Any] | None = None
    images: list[dict[str, Any]] = field(default_factory=list)  # a tool's, base64


def conversation_of_message(*, user: Any, message_id: Any) -> Any:
    """Return the id of the conversation holding the user's message, or raise NotFound."""
    return get_message_for_user(user=user, message_id=message_id).conversation_id


@transaction.atomic
def claim_reply(
    *,
    user: Any,
    conversation_id: Any,
    ask: Ask,
    run_id: uuid.UUID,
    owner: str,
    sensitive: tuple[str, ...] = (),
) -> Claim:
    """Store what `ask` adds (a user message for send and edit) and start run `run_id`;
    `sensitive`: the kinds of sensitive information the user confirmed storing.

    All in one transaction, under the conversation's row lock. Raises NotFound for a
    conversation or message that is missing or someone else's; Invalid for a message the
    ask does not apply to. A repeated `client_id` stores nothing and claims nothing; a
    run already running raises Busy and stores nothing.
    """
    conversation = access_conversation(
        user=user, conversation_id=conversation_id, lock=True, with_documents=True
    )
    if ask.client_id:
        existing = conversation.messages.filter(client_id=ask.client_id).first()
        if existing is not None:
            runs = ReplyRun.objects.filter(reply_to=existing)
            run = runs.filter(pk=existing.run_id).first() or runs.order_by("-started_at").first()
            reply = None
            if run is not None and run.status == ReplyRun.Status.FINISHED:
                reply = Message.objects.filter(pk=run.pk).first()
                reply = with_sibling_ids(reply) if reply is not None else None
            partner = runs.filter(pk=partner_id(run.pk)).first() if run else None
            question = with_sibling_ids(existing)
            return Claim(conversation, question, False, run, reply, partner=partner)
    target = _target(conversation, ask)
    # Asked after the lock, in its own statement: it sees a run committed while we waited
    # (a subquery of the locking statement would see the snapshot from before the wait).
    running = running_run(conversation_id=conversation.pk)
    if running is not None:
        raise Busy(running)
    continues = target if ask.kind == "continue" else None
    if ask.kind in ("send", "edit"):
        question = services.insert_message(
            conversation,
            services.NewMessage(
                role=Message.Role.USER,
                content=ask.content or "",
                created_by=user,
                tokens_used=None,  # no server reports a message's own share of a prompt
                client_id=ask.client_id,
                run_id=run_id,
                parent="current" if target is None else target.parent_id,
                metadata={"sensitive": list(sensitive)} if sensitive else None,
            ),
        )
        attachments.claim(
            conversation_id=conversation.pk, user=user, ids=list(ask.attachments), message=question
        )
    else:
        assert target is not None
        question = with_sibling_ids(target if target.role == Message.Role.USER else target.parent)
        # The branch being answered is shown while the new version streams.
        conversation.current_message = question
        conversation.save(update_fields=["current_message", "updated_at"])
    resume_after = continues or (question.parent if question.parent_id else None)
    # Every ask starts a turn here; refused, the transaction stores nothing of it.
    budgeted = usage.check_budget(
        user=user, reserved=lambda: selectors.held_by_running_replies(user)
    )
    # Side by side, each model's reply holds its own reservation and counts its own usage.
    reserved = _reservation(question, resume_after) if budgeted else 0

    def start(lane: int, pk: uuid.UUID) -> ReplyRun:
        return rows.insert(
            ReplyRun(
                id=pk,
                conversation=conversation,
                reply_to=question,
                owner=owner,
                heartbeat_at=timezone.now(),
                reserved_tokens=reserved,
                lane=lane,
            )
        )

    run = start(0, run_id)
    partner = start(1, partner_id(run_id)) if ask.models else None
    return Claim(conversation, question, True, run, None, resume_after, continues, partner)


@transaction.atomic
def claim_first_reply(
    *,
    user: Any,
    conversation: services.NewConversation,
    ask: Ask,
    run_id: uuid.UUID,
    owner: str,
    sensitive: tuple[str, ...] = (),
) -> Claim:
    """Create the user's conversation (`conversation`) with
    `ask`'s message as its first, and start run `run_id`.

    One transaction: a message refused here (an attachment that is not the user's, an
    unknown model) leaves no conversation behind.
    """
    created = services.create_new_conversation(user=user, new=conversation)
    return claim_reply(
        user=user,
        conversation_id=created.pk,
        ask=ask,
        run_id=run_id,
        owner=owner,
        sensitive=sensitive,
    )


def partner_id(run_id: Any) -> uuid.UUID:
    """Return the id of the side-by-side partner of run `run_id` (its lane 1), derived so
    a repeated send finds it."""
    return uuid.uuid5(parse_uuid(run_id) or uuid.NAMESPACE_OID, "side-by-side")


def _reservation(question: Message, memory_end: Message | None) -> int:
    """Return the tokens a reply to `question` holds against its owner's budget while it
    runs: the last turn's prompt and answer (where its memory ends), the question (at most
    a token per two characters) and CHAT_BUDGET_RESERVE_TOKENS for its answer. Stored, the
    reply counts what it really used instead."""
    last_turn = 0
    if memory_end is not None and memory_end.role == Message.Role.ASSISTANT:
        last_turn = sum(usage.reply_tokens(memory_end.metadata))
    return last_turn + len(question.content) // 2 + settings.CHAT_BUDGET_RESERVE_TOKENS


def _target(conversation: Conversation, ask: Ask) -> Message | None:
    """Return the message `ask` acts on (None for a send); check that the ask applies."""
    if ask.kind == "send":
        return None
    target = (
        conversation.messages.select_related("parent").filter(pk=ask.message_id).first()
        if parse_uuid(ask.message_id)
        else None
    )
    if target is None:
        raise NotFound(_("Message not found."))
    question = target if target.role == Message.Role.USER else target.parent
    if ask.kind == "edit" and target.role != Message.Role.USER:
        raise Invalid(_("Only your own messages can be edited."))
    if ask.kind == "continue" and (
        target.role != Message.Role.ASSISTANT
        or target.finish_reason not in CUT_OFF
        or not target.content
    ):
        raise Invalid(_("Only a reply that was cut short can be continued."))
    if question is None or question.role != Message.Role.USER:
        raise Invalid(_("That message answers no message of yours."))
    return target


def with_sibling_ids(message: Message) -> Message:
    """Give one message its `sibling_ids` (message JSON carries them)."""
    message.sibling_ids = tree.sibling_ids(message)
    return message


def beat(*, run_ids: list[Any]) -> set[uuid.UUID]:
    """Refresh the heartbeat of runs in one write; return those that are still running."""
    if not run_ids:
        return set()
    with transaction.atomic():
        running = ReplyRun.objects.filter(pk__in=run_ids, status=ReplyRun.Status.RUNNING)
        alive = set(running.values_list("pk", flat=True))
        running.filter(pk__in=alive).update(heartbeat_at=timezone.now())
    return alive


def _end(run_id: Any, *, stale_before: datetime | None = None) -> bool:
    """Mark a running run finished (only if its heartbeat is older than `stale_before`, when
    given); say whether it was running."""
    sql = f"UPDATE {_RUNS} SET status = %s, finished_at = %s WHERE id = %s AND status = %s"
    params = [
        ReplyRun.Status.FINISHED,
        rows.param(ReplyRun, "finished_at", timezone.now()),
        rows.param(ReplyRun, "pk", parse_uuid(run_id)),
        ReplyRun.Status.RUNNING,
    ]
    if stale_before is not None:
        sql += " AND heartbeat_at < %s"
        params.append(rows.param(ReplyRun, "heartbeat_at", stale_before))
    return bool(rows.execute(sql, params))


_RUNS = ReplyRun._meta.db_table


def _store(
    conversation: Conversation, run_id: Any, reply: Reply, question: Message | None
) -> Message:
    """Store a run's reply (its id is the run's) under its question; the caller holds the
    conversation's lock. It becomes the current message unless the user has switched
    branches since the question."""
    question_id = question.pk if question is not None else None
    message = services.insert_message(
        conversation,
        services.NewMessage(
            role=Message.Role.ASSISTANT,
            content=reply.content,
            parts=reply.parts,
            model=reply.model,
            tokens_used=reply.tokens_used,  # None: estimated from the content
            finish_reason=reply.finish_reason,
            metadata=dict(reply.metadata or {}),
            message_id=run_id,
            run_id=run_id,
            parent=question_id,
            make_current=conversation.current_message_id in (question_id, None),
        ),
    )
    attachments.keep_generated(message, reply.images)
    usage.record_reply(
        user_id=conversation.created_by_id,
        conversation_id=conversation.pk,
        model=message.model,
        metadata=message.metadata,
        at=message.created_at,
    )
    return message


@transaction.atomic
def finish_run(
    *, conversation_id: Any, run_id: Any, question: Message, reply: Reply
) -> Finished | None:
    """Store a run's reply and free the conversation's slot, in one transaction.

    Answers None when the conversation is gone. A run another process already ended
    (it thought this one dead) keeps that reply: it is returned, not stored again.
    """
    try:
        conversation = services.lock_conversation(conversation_id)
    except NotFound:
        return None
    if not _end(run_id):
        message = Message.objects.filter(pk=run_id).first()
        if message is None:
            return None
        return Finished(conversation, with_sibling_ids(message), question, False)
    return Finished(conversation, _store(conversation, run_id, reply, question), question)


@transaction.atomic
def finish_stale_run(*, run: ReplyRun, stale_before: datetime, content: str) -> Finished | None:
    """Store a dead process's run as `interrupted` with `content`; None if it is alive."""
    try:
        conversation = services.lock_conversation(run.conversation_id)
    except NotFound:
        return None
    if not _end(run.pk, stale_before=stale_before):
        return None
    reply = Reply(content=content, finish_reason=Message.FinishReason.INTERRUPTED, parts=[])
    question = Message.objects.filter(pk=run.reply_to_id).first()
    return Finished(conversation, _store(conversation, run.pk, reply, question), question)


def stale_runs(*, stale_before: datetime, limit: int = 50) -> list[uuid.UUID]:
    """Return running runs whose heartbeat is older than `stale_before`, oldest first."""
    stale = ReplyRun.objects.filter(status=ReplyRun.Status.RUNNING, heartbeat_at__lt=stale_before)
    return list(stale.order_by("heartbeat_at").values_list("pk", flat=True)[:limit])


def running_runs(*, conversation_id: Any) -> list[ReplyRun]:
    """Return the conversation's running runs (one, or a side-by-side pair), by lane."""
    sql = f"SELECT * FROM {_RUNS} WHERE conversation_id = %s AND status = %s ORDER BY lane"
    key = rows.param(ReplyRun, "conversation", parse_uuid(conversation_id))
    return rows.fetch_all(ReplyRun, sql, [key, ReplyRun.Status.RUNNING])


def running_run(*, conversation_id: Any) -> ReplyRun | None:
    """Return the conversation's running run, if there is one (the first lane's of a pair)."""
    return next(iter(running_runs(conversation_id=conversation_id)), None)


def load_sync(*, conversation_id: Any, after: int, run_ids: list[str]) -> SyncRows:
    """Return the messages after `after` (every branch, with their siblings; a page of
    SYNC_PAGE_MESSAGES), whether more follow, which replies of `run_ids` are already
    stored, and the current branch's leaf."""
    messages = list(
        Message.objects.filter(conversation_id=conversation_id, sequence_number__gt=after).order_by(
            "sequence_number"
        )[: SYNC_PAGE_MESSAGES + 1]
    )
    has_more = len(messages) > SYNC_PAGE_MESSAGES
    del messages[SYNC_PAGE_MESSAGES:]
    found = (
        Conversation.objects.filter(pk=conversation_id)
        .values_list("current_message_id", "created_by_id")
        .first()
    )
    current, owner_id = found or (None, None)
    if messages:
        tree.with_siblings(messages)
        selectors.for_display(messages, user_id=owner_id)
    stored = (
        {str(pk) for pk in Message.objects.filter(pk__in=run_ids).values_list("pk", flat=True)}
        if run_ids
        else set()
    )
    return SyncRows(messages, has_more, stored, current)
