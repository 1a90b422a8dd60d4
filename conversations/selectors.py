"""Reads. Every read is scoped to the requesting user (SPEC: Ownership)."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.db import connection
from django.db.models import Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.db.models.lookups import Contains
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from accounts.models import UserSettings
from core import rows
from core.errors import NotFound
from core.ids import parse_uuid
from knowledge.models import DocumentChunk

from .models import Attachment, Conversation, Message, MessageFeedback, Project, ReplyRun
from .serializers import attachment_to_dict

NOT_FOUND_MESSAGE = gettext_noop("Conversation not found.")


def _user_pk(user: Any) -> Any | None:
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return user.pk


def owned_by(user: Any) -> QuerySet[Conversation]:
    """Return the user's conversations (none for an anonymous user): every read starts here."""
    pk = _user_pk(user)
    if pk is None:
        return Conversation.objects.none()
    return Conversation.objects.filter(created_by_id=pk)


def listed_by(user: Any) -> QuerySet[Conversation]:
    """Return the user's conversations that lists and searches show: all but temporary ones."""
    return owned_by(user).filter(temporary=False)


def access_conversation(
    *,
    user: Any,
    conversation_id: Any,
    lock: bool = False,
    with_documents: bool = False,
) -> Conversation:
    """Return the user's conversation; someone else's answers exactly like a missing one.

    `lock` takes the row lock (the caller holds a transaction); `with_documents` (with
    `lock`: a reply's claim) annotates what a reply asks before it can start
    (`owner_has_documents`, and the owner's `owner_default_model`, `owner_instructions`,
    `owner_memory_enabled`, `owner_tools_enabled`), so one statement does the access
    check, the lock and those questions.
    """
    pk, owner = parse_uuid(conversation_id), _user_pk(user)
    if pk is None or owner is None:
        raise NotFound(_(NOT_FOUND_MESSAGE))
    if with_documents:
        assert lock, "the claim's statement locks the row"
        found = _claimed(pk, owner)
        if found is None:
            raise NotFound(_(NOT_FOUND_MESSAGE))
        return found
    mine = owned_by(user)
    if lock:
        mine = mine.select_for_update()
    else:
        mine = mine.select_related("project", "parent_conversation")
    try:
        return mine.get(pk=pk)
    except Conversation.DoesNotExist:
        raise NotFound(_(NOT_FOUND_MESSAGE)) from None


# Written out once rather than built by the ORM at every claim: the queryset with four
# subqueries and an EXISTS took ~3 ms of CPU to build and compile, every reply's start.
_CLAIMED_SQL = """SELECT c.*,
 EXISTS (SELECT 1 FROM {chunks} d WHERE d.owner_id = c.created_by_id
         AND (d.scope IS NULL OR d.scope = c.id)) AS owner_has_documents,
 s.default_model AS owner_default_model, s.custom_instructions AS owner_instructions,
 s.memory_enabled AS owner_memory_enabled, s.tools_enabled AS owner_tools_enabled
FROM {conversations} c LEFT JOIN {settings} s ON s.user_id = c.created_by_id
WHERE c.id = %s AND c.created_by_id = %s{lock}"""


def _claimed(pk: Any, owner: Any) -> Conversation | None:
    """Return the owner's conversation `pk`, locked and annotated for a claim, or None."""
    sql = _CLAIMED_SQL.format(
        chunks=DocumentChunk._meta.db_table,
        conversations=Conversation._meta.db_table,
        settings=UserSettings._meta.db_table,
        lock=" FOR UPDATE OF c" if connection.features.has_select_for_update_of else "",
    )
    key = rows.param(Conversation, "pk", pk)
    found = rows.fetch(Conversation, sql, [key, owner])
    if found is not None:
        tools = found.owner_tools_enabled
        found.owner_tools_enabled = json.loads(tools) if isinstance(tools, str) else tools
        found.owner_has_documents = bool(found.owner_has_documents)
        if found.owner_memory_enabled is not None:
            found.owner_memory_enabled = bool(found.owner_memory_enabled)
    return found


def get_conversation_for_user(*, user: Any, conversation_id: Any) -> Conversation:
    """Return the user's conversation (see `access_conversation`)."""
    return access_conversation(user=user, conversation_id=conversation_id)


aget_conversation_for_user = sync_to_async(get_conversation_for_user)


@dataclass(frozen=True)
class SocketAccess:
    """What opening a socket on a conversation needs to know of it."""

    temporary: bool
    owner_id: int
    run_may_be_stale: bool  # a run is `running` with a heartbeat older than asked


# One short statement per socket opened: the ORM's version (the conversation with its
# project and parent, then its running run) cost ~2 ms of CPU, a tenth of a reply's start.
_SOCKET_SQL = """SELECT c.temporary, c.created_by_id, EXISTS (
  SELECT 1 FROM {runs} r WHERE r.conversation_id = c.id AND r.status = %s AND r.heartbeat_at < %s)
FROM {conversations} c WHERE c.id = %s AND c.created_by_id = %s"""


def socket_access(*, user: Any, conversation_id: Any, stale_before: datetime) -> SocketAccess:
    """Return what a socket on the user's conversation needs (see `SocketAccess`); someone
    else's conversation answers NotFound, exactly like a missing one."""
    pk, owner = parse_uuid(conversation_id), _user_pk(user)
    if pk is None or owner is None:
        raise NotFound(_(NOT_FOUND_MESSAGE))
    sql = _SOCKET_SQL.format(
        runs=ReplyRun._meta.db_table, conversations=Conversation._meta.db_table
    )
    params = [
        ReplyRun.Status.RUNNING.value,
        rows.param(ReplyRun, "heartbeat_at", stale_before),
        rows.param(Conversation, "pk", pk),
        owner,
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        raise NotFound(_(NOT_FOUND_MESSAGE))
    return SocketAccess(bool(row[0]), row[1], bool(row[2]))


# The one thread-sensitive thread, as the socket's other calls before it (db_async's pool
# made a burst of sockets wait behind the replies' claims: issue 37).
asocket_access = sync_to_async(socket_access)


def held_by_running_replies(user: Any) -> int:
    """Return the tokens the user's replies still running hold against their budget."""
    with connection.cursor() as cursor:  # written out: one of a claim's statements
        cursor.execute(_HELD_SQL, [ReplyRun.Status.RUNNING, _user_pk(user)])
        (held,) = cursor.fetchone()
    return int(held or 0)


_HELD_SQL = f"""SELECT SUM(r.reserved_tokens) FROM {ReplyRun._meta.db_table} r
JOIN {Conversation._meta.db_table} c ON c.id = r.conversation_id
WHERE r.status = %s AND c.created_by_id = %s"""


def get_message_for_user(*, user: Any, message_id: Any) -> Message:
    """Return a message of one of the user's conversations, or raise NotFound."""
    pk, owner = parse_uuid(message_id), _user_pk(user)
    if pk is None or owner is None:
        raise NotFound(_("Message not found."))
    try:
        return Message.objects.select_related("conversation").get(
            pk=pk, conversation__created_by_id=owner
        )
    except Message.DoesNotExist:
        raise NotFound(_("Message not found.")) from None


def get_project_for_user(*, user: Any, project_id: Any) -> Project:
    """Return the user's project, or raise NotFound."""
    try:
        pk = int(project_id)
    except (TypeError, ValueError):
        raise NotFound(_("Project not found.")) from None
    try:
        return Project.objects.get(pk=pk, owner=user)
    except Project.DoesNotExist:
        raise NotFound(_("Project not found.")) from None


def list_messages(
    *,
    conversation: Conversation,
    after: int | None = None,
    before: int | None = None,
    limit: int = 50,
    newest: bool = False,
    among: Collection[Any] | None = None,
    role: str | None = None,
    part: str | None = None,
    has_tool: bool | None = None,
) -> list[Message]:
    """Return messages oldest first, optionally the newest `limit` of the range, optionally
    only those whose ids are `among` (a branch), of one `role`, holding a `part` type, or
    with (or without) a tool call."""
    qs: QuerySet[Message] = conversation.messages.all()
    if among is not None:
        qs = qs.filter(pk__in=among)
    if role is not None:
        qs = qs.filter(role=role)
    if part is not None:
        qs = qs.filter(has_part(part))
    if has_tool is not None:
        qs = qs.filter(has_part("tool_call")) if has_tool else qs.exclude(has_part("tool_call"))
    if after is not None:
        qs = qs.filter(sequence_number__gt=after)
    if before is not None:
        qs = qs.filter(sequence_number__lt=before)
    if newest:
        page = list(qs.order_by("-sequence_number")[:limit])
        page.reverse()
        return page
    return list(qs.order_by("sequence_number")[:limit])


def has_part(kind: str) -> Q | Contains:
    """Return the condition "the message's `parts` hold one of type `kind`"."""
    if connection.features.supports_json_field_contains:
        return Q(parts__contains=[{"type": kind}])
    # SQLite stores parts as JSON text (json.dumps' separators): match the type entry.
    return Contains(Cast("parts", TextField()), f'"type": {json.dumps(kind)}')


def with_feedback(messages: list[Message], *, user_id: Any) -> list[Message]:
    """Give each message `my_feedback` ({rating, comment} of `user_id`, or None); one query."""
    if not messages:
        return messages
    found = {
        row["message_id"]: {"rating": row["rating"], "comment": row["comment"]}
        for row in MessageFeedback.objects.filter(
            user_id=user_id, message_id__in=[m.pk for m in messages]
        ).values("message_id", "rating", "comment")
    }
    for message in messages:
        message.my_feedback = found.get(message.pk)
    return messages


def with_attachments(messages: list[Message]) -> list[Message]:
    """Give each message `attachment_list` (its attachments as JSON); one query."""
    if not messages:
        return messages
    found: dict[Any, list[dict[str, Any]]] = {}
    attached = Attachment.objects.filter(message_id__in=[m.pk for m in messages]).order_by(
        "created_at", "id"
    )
    for row in attached:
        found.setdefault(row.message_id, []).append(attachment_to_dict(row))
    for message in messages:
        message.attachment_list = found.get(message.pk, [])
    return messages


def for_display(messages: list[Message], *, user_id: Any) -> list[Message]:
    """Give messages what their JSON and the page show beside their rows: the user's
    feedback and the attachments."""
    return with_attachments(with_feedback(messages, user_id=user_id))


def list_projects(*, user: Any) -> list[Project]:
    """Return the user's projects by name."""
    return list(Project.objects.filter(owner=user).order_by("name"))


def list_recent_conversations(*, user: Any, limit: int = 50) -> list[Conversation]:
    """Return the user's listed conversations for the sidebar: pinned ones first, then the
    rest, each with the newest activity first (temporary ones never)."""
    return list(
        listed_by(user).select_related("project").order_by("-pinned", "-updated_at", "-id")[:limit]
    )


def list_forks(*, conversation: Conversation) -> list[dict[str, str]]:
    """Return the ids and titles of a conversation's direct forks, oldest first."""
    forks = conversation.forks.order_by("created_at", "id").values_list("id", "title")
    return [{"id": str(pk), "title": title} for pk, title in forks]
