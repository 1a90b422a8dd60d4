"""Writes. Each one validates, changes rows in one transaction, then sends its event."""

from __future__ import annotations

import logging
import re
import uuid
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, Max, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from agent.tokens import estimate_tokens
from core import rows
from core.errors import NotFound, editable_changes
from core.ids import parse_uuid
from core.models_on_offer import check_model
from presets.selectors import access_preset
from toolbox.servers import list_servers
from toolbox.tool_catalog import check_ids

from . import events
from .models import (
    TOKENS_ESTIMATED,
    Conversation,
    Message,
    Project,
)
from .replies import threads

logger = logging.getLogger(__name__)

EDITABLE_FIELDS = {
    "title",
    "description",
    "status",
    "project",
    "service_id",
    "model",
    "system_prompt",
    "temperature",
    "pinned",
    "tools",
}
# A first-words title is this long at most (ChatGPT's are a few words): a whole long first
# message would fill the sidebar row and the header.
AUTO_TITLE_TARGET_LENGTH = 40


def _project_of(*, user: Any, project: Any) -> Project | None:
    if project is None or project == "":
        return None
    if isinstance(project, Project):
        if project.owner_id != user.pk:
            raise NotFound(_("Project not found."))
        return project
    from .selectors import get_project_for_user

    return get_project_for_user(user=user, project_id=project)


@dataclass(frozen=True)
class NewConversation:
    """A conversation to create, as `create_conversation` takes it: typed from the edge
    (`ConversationCreateIn`) and carried whole to the transaction that stores it with its
    first message (`replies.store.claim_first_reply`)."""

    title: str = ""
    description: str = ""
    project: Any = None
    service_id: str = ""
    model: str = ""
    system_prompt: str = ""
    temperature: float | None = None
    temporary: bool = False
    preset: Any = None  # a preset's id


def create_new_conversation(*, user: Any, new: NewConversation) -> Conversation:
    """Create `new` for `user` (`create_conversation`, its rules)."""
    return create_conversation(user=user, **{f.name: getattr(new, f.name) for f in fields(new)})


@transaction.atomic
def create_conversation(
    *,
    user: Any,
    title: str = "",
    description: str = "",
    project: Any = None,
    service_id: str = "",
    model: str = "",
    system_prompt: str = "",
    temperature: float | None = None,
    temporary: bool = False,
    preset: Any = None,
) -> Conversation:
    """Create a conversation owned by `user` (`temporary`: see conversations/temporary.py),
    started from `preset` (an id) when given.

    The fields come typed from the edge (`ConversationCreateIn`); judged here are the
    domain's rules: the model is on offer, the project is the user's, the preset is one
    they may use.
    """
    conversation = Conversation.objects.create(
        created_by=user,
        temporary=temporary,
        model=check_model(model),
        system_prompt=system_prompt,
        temperature=temperature,
        title=title,
        description=description,
        project=_project_of(user=user, project=project),
        service_id=service_id,
        preset=access_preset(user=user, preset_id=preset) if preset is not None else None,
    )
    events.send_conversation_on_commit(conversation)
    return conversation


@transaction.atomic
def update_conversation(*, conversation: Conversation, **changes: Any) -> Conversation:
    """Change title, description, status, project, service_id, model, system prompt,
    temperature or pinned (typed at the edge: `ConversationPatchIn`); the model must be on
    offer and the project the owner's. Pinning alone leaves `updated_at` (the
    conversation's place among the recent ones) as it is."""
    cleaned = editable_changes(changes, EDITABLE_FIELDS)
    if "model" in changes:
        cleaned["model"] = check_model(changes["model"])
    if "project" in changes:
        cleaned["project"] = _project_of(user=conversation.created_by, project=changes["project"])
    if changes.get("tools") is not None:
        cleaned["tools"] = check_ids(changes["tools"], list_servers())
    if "title" in cleaned:
        cleaned["title_source"] = Conversation.TitleSource.USER
    if cleaned.get("status") == Conversation.Status.ARCHIVED != conversation.status:
        cleaned["archived_at"] = timezone.now()
    elif "status" in cleaned and cleaned["status"] != Conversation.Status.ARCHIVED:
        cleaned["archived_at"] = None
    # Written on the locked row, so the announcement carries the counters as they are
    # (a reply may have been stored since the caller read the conversation).
    locked = lock_conversation(conversation.pk)
    for field, value in cleaned.items():
        setattr(locked, field, value)
        setattr(conversation, field, value)
    if cleaned and set(cleaned) <= {"pinned"}:
        Conversation.objects.filter(pk=locked.pk).update(**cleaned)
    else:
        locked.save(update_fields=[*cleaned, "updated_at"])
    events.send_conversation_on_commit(locked)
    return locked


def archive_conversation(*, conversation: Conversation) -> Conversation:
    """Archive a conversation."""
    return update_conversation(conversation=conversation, status=Conversation.Status.ARCHIVED)


def rename_conversation(*, conversation: Conversation, title: str) -> Conversation:
    """Give a conversation a new title."""
    return update_conversation(conversation=conversation, title=title)


@transaction.atomic
def delete_conversation(*, conversation: Conversation) -> None:
    """Delete a conversation with its messages, and tell its sockets and list pages.

    Locks the conversation row first, as every writer of its messages and runs does,
    so a delete racing a reply's store waits for it instead of deadlocking.
    """
    conversation_id, owner_id = conversation.id, conversation.created_by_id
    lock_conversation(conversation_id).delete()
    # Every process that runs this conversation's reply cancels it on this frame.
    events.send_on_commit(
        events.conversation_deleted(conversation_id),
        conversation_id=conversation_id,
        user_id=owner_id,
    )
    transaction.on_commit(lambda: _drop_agent_thread(conversation_id))


def _drop_agent_thread(conversation_id: Any) -> None:
    try:
        threads.delete_agent_thread(str(conversation_id))
    except Exception:  # the rows are gone; a leftover thread is only disk space
        logger.exception("could not delete agent thread %s", conversation_id)


@dataclass(frozen=True, kw_only=True)
class NewMessage:
    """A message to store: what it says and who wrote it, and where it goes on the tree
    (`parent` None: a root; "current": under the current branch's leaf)."""

    role: str
    content: str
    created_by: Any = None
    parts: list[dict[str, Any]] | None = None
    model: str = ""
    # None: no count was reported for it, so it is our estimate of `content`, marked
    # `tokens_estimated` in its metadata.
    tokens_used: int | None = 0
    finish_reason: str = ""
    metadata: dict[str, Any] | None = None
    client_id: str | None = None
    message_id: uuid.UUID | str | None = None
    created_at: datetime | None = None
    run_id: uuid.UUID | str | None = None
    parent: Message | uuid.UUID | str | None = "current"
    # It becomes the current branch's leaf.
    make_current: bool = True


def insert_message(conversation: Conversation, new: NewMessage) -> Message:
    """Store a message with the next sequence number and save the conversation's counters;
    the message comes back with its `sibling_ids` (itself last).

    The caller has validated the input and holds the conversation's row lock
    (`lock_conversation` in a transaction). Numbers come from the conversation's counter,
    so one that was handed out is never handed out again, even after a delete.
    """
    content, role, tokens_used, parent = new.content, new.role, new.tokens_used, new.parent
    metadata = dict(new.metadata or {})
    if tokens_used is None:
        tokens_used = estimate_tokens(content)
        metadata[TOKENS_ESTIMATED] = True
    if parent == "current":
        parent = conversation.current_message_id
    conversation.last_sequence_number += 1
    message = Message(
        id=new.message_id or uuid.uuid4(),
        conversation=conversation,
        role=role,
        content=content,
        parts=new.parts or [],
        model=new.model,
        tokens_used=max(0, int(tokens_used)),
        finish_reason=new.finish_reason,
        metadata=metadata,
        sequence_number=conversation.last_sequence_number,
        client_id=new.client_id or None,
        run_id=new.run_id,
        created_by=new.created_by,
        parent_id=parent.pk if isinstance(parent, Message) else parent,  # type: ignore[union-attr]
    )
    if new.created_at is not None:
        message.created_at = new.created_at
    update_fields = [
        "message_count",
        "total_tokens_used",
        "last_message_at",
        "last_sequence_number",
        "updated_at",
    ]
    if new.make_current:
        conversation.current_message = message
        update_fields.append("current_message")
    if role == Message.Role.USER and _titled_by(conversation, message):
        # Like the chat apps people know: an untitled conversation takes its first words,
        # and a new version of its first message renames it (unless the person did).
        conversation.title = title_from_text(content)
        conversation.title_source = Conversation.TitleSource.FIRST_WORDS
        update_fields += ["title", "title_source"]
    conversation.message_count += 1
    conversation.total_tokens_used += message.tokens_used
    conversation.last_message_at = max(
        filter(None, [conversation.last_message_at, message.created_at])
    )
    siblings = _write_message(message, conversation, update_fields)
    message.sibling_ids = [*siblings, str(message.pk)]
    return message


def _write_message(message: Message, conversation: Conversation, fields: list[str]) -> list[str]:
    """Insert `message`, save `fields` of its conversation and return the ids of its
    siblings written before it (oldest first): one statement on PostgreSQL (a reply's start
    and end each store a message under load; see core/rows.py)."""
    insert, insert_params = rows.insert_statement(message)
    update, update_params = rows.update_statement(conversation, fields)
    parent = "= %s" if message.parent_id is not None else "IS NULL"
    siblings = (
        f"SELECT id FROM {Message._meta.db_table} WHERE conversation_id = %s"
        f" AND parent_id {parent} ORDER BY sequence_number"
    )
    siblings_params = [rows.param(Message, "conversation", message.conversation_id)]
    if message.parent_id is not None:
        siblings_params.append(rows.param(Message, "parent", message.parent_id))
    if connection.vendor == "postgresql":  # the SELECT sees the rows from before the WITH
        ids = rows.column(
            f"WITH m AS ({insert}), c AS ({update}) {siblings}",
            [*insert_params, *update_params, *siblings_params],
        )
    else:
        ids = rows.column(siblings, siblings_params)
        rows.execute(insert, insert_params)
        rows.execute(update, update_params)
    rows.saved(message)
    return [str(Message._meta.pk.to_python(pk)) for pk in ids]


COUNTERS = ["message_count", "total_tokens_used", "last_message_at", "last_sequence_number"]


def recount(conversation: Conversation, *, also_save: tuple[str, ...] = ()) -> None:
    """Set the conversation's counters from its messages after a bulk write (a delete, a
    fork's copy, an import) and save them with `also_save`. The last sequence number only
    ever grows: a number once handed out keeps its meaning."""
    totals = conversation.messages.aggregate(
        n=Count("id"), tokens=Sum("tokens_used"), last=Max("created_at"), top=Max("sequence_number")
    )
    conversation.message_count = totals["n"] or 0
    conversation.total_tokens_used = totals["tokens"] or 0
    conversation.last_message_at = totals["last"]
    conversation.last_sequence_number = max(conversation.last_sequence_number, totals["top"] or 0)
    conversation.save(update_fields=[*COUNTERS, "updated_at", *also_save])


def _titled_by(conversation: Conversation, message: Message) -> bool:
    """Say whether a user's message names its conversation: the first one of an untitled
    conversation, or a new version of the first one while no person has named it."""
    if not conversation.title:
        return True
    automatic = (Conversation.TitleSource.FIRST_WORDS, Conversation.TitleSource.MODEL)
    return message.parent_id is None and conversation.title_source in automatic


# Where a first sentence ends (a question's mark stays: "Why is the sky blue?").
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s|[\n\r]")


def title_from_text(text: str, *, limit: int = AUTO_TITLE_TARGET_LENGTH) -> str:
    """Return a short title from the first words of `text`: its first sentence, cut at a
    word (a long word or a text without spaces at a character) to about `limit`."""
    first = _SENTENCE_END.split(text.strip(), maxsplit=1)[0]
    line = " ".join(first.split()).rstrip(" .,;:")
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" .,;:") + "…"


def lock_conversation(conversation_id: Any) -> Conversation:
    """Lock and return the conversation row; the caller holds a transaction."""
    pk = parse_uuid(conversation_id)
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    found = None
    if pk is not None:
        sql = f"SELECT * FROM {Conversation._meta.db_table} WHERE id = %s{lock}"
        found = rows.fetch(Conversation, sql, [rows.param(Conversation, "pk", pk)])
    if found is None:
        raise NotFound(_("Conversation not found."))
    return found
