"""The current branch: reading it, switching it, deleting a message (and what hangs under it)
and where the branch goes after.

Every message has a `parent` (null for a root); what the user sees, exports by default
and what the agent remembers is the path from the root to `Conversation.current_message`
(the tree itself is read by conversations/tree.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper
from django.utils.translation import gettext as _

from core.errors import Conflict, NotFound

from . import events, selectors
from .models import TOKENS_ESTIMATED_Q, Conversation, Message, ReplyRun
from .selectors import get_message_for_user
from .services import lock_conversation, recount
from .tree import Tree, current_branch, current_leaf, with_siblings


@dataclass(frozen=True)
class Counts:
    """Messages counted: how many, their tokens, and whether any count is an estimate."""

    messages: int = 0
    tokens: int = 0
    estimated: bool = False

    @classmethod
    def of(cls, messages: Iterable[Message]) -> Counts:
        rows = list(messages)
        return cls(
            len(rows), sum(m.tokens_used for m in rows), any(m.tokens_estimated for m in rows)
        )

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.messages + other.messages,
            self.tokens + other.tokens,
            self.estimated or other.estimated,
        )


def count_branch(conversation: Conversation, *, leaving_out: Iterable[Any] = ()) -> Counts:
    """Count the current branch's messages, but those of `leaving_out` (the ones a page
    shows and counts itself: the page's header then adds up with what it shows)."""
    tree = Tree.of(conversation.pk)
    skipped = set(leaving_out)
    path = [pk for pk in current_branch(conversation, tree) if pk not in skipped]
    if not path:
        return Counts()
    estimated = ExpressionWrapper(TOKENS_ESTIMATED_Q, output_field=BooleanField())
    rows = (
        conversation.messages.order_by()
        .annotate(estimated=estimated)
        .values_list("pk", "tokens_used", "estimated")
    )
    figures = {pk: (tokens, bool(guess)) for pk, tokens, guess in rows}
    counted = [figures[pk] for pk in path if pk in figures]
    return Counts(len(counted), sum(t for t, _ in counted), any(guess for _, guess in counted))


def list_messages(
    *,
    conversation: Conversation,
    branch: str = "current",
    after: int | None = None,
    before: int | None = None,
    limit: int = 50,
    newest: bool = False,
    role: str | None = None,
    part: str | None = None,
    has_tool: bool | None = None,
) -> list[Message]:
    """Return a page of the current branch (or, with branch="all", of every message),
    oldest first, each with its `sibling_ids` and the owner's feedback; `role`, `part`
    and `has_tool` filter it (selectors.list_messages)."""
    tree = Tree.of(conversation.pk)
    among = None if branch == "all" else current_branch(conversation, tree)
    rows = selectors.list_messages(
        conversation=conversation,
        after=after,
        before=before,
        limit=limit,
        newest=newest,
        among=among,
        role=role,
        part=part,
        has_tool=has_tool,
    )
    return selectors.for_display(with_siblings(rows, tree), user_id=conversation.created_by_id)


@transaction.atomic
def switch_branch(*, user: Any, message_id: Any, conversation_id: Any = None) -> Conversation:
    """Make the newest leaf under `message_id` the current message; tell every socket.

    Raises NotFound for a message that is missing, someone else's, or (with
    `conversation_id`) in another conversation.
    """
    message = get_message_for_user(user=user, message_id=message_id)
    if conversation_id is not None and str(message.conversation_id) != str(conversation_id):
        raise NotFound(_("Message not found."))
    conversation = lock_conversation(message.conversation_id)
    leaf = Tree.of(conversation.pk).newest_leaf(message.pk)
    if conversation.current_message_id != leaf:
        conversation.current_message_id = leaf
        conversation.save(update_fields=["current_message", "updated_at"])
        events.send_conversation_on_commit(conversation)
    return conversation


def show_message(*, user: Any, message_id: Any, conversation_id: Any) -> Conversation:
    """Switch to the branch holding `message_id` unless the current branch holds it.

    Raises NotFound for a message that is missing, someone else's or in another
    conversation.
    """
    message = get_message_for_user(user=user, message_id=message_id)
    if str(message.conversation_id) != str(conversation_id):
        raise NotFound(_("Message not found."))
    conversation = message.conversation
    tree = Tree.of(conversation.pk)
    if message.pk in current_branch(conversation, tree):
        return conversation
    return switch_branch(user=user, message_id=message.pk, conversation_id=conversation_id)


def leaf_after_delete(
    conversation: Conversation, tree: Tree, doomed: set[uuid.UUID]
) -> uuid.UUID | None:
    """Return where the current branch goes when `doomed` messages are deleted."""
    current = current_leaf(conversation, tree)
    if current is None or current not in doomed:
        return current
    node = tree.parent.get(current)
    while node is not None and node in doomed:
        node = tree.parent.get(node)
    # The nearest remaining leaf: the newest one under the closest surviving ancestor.
    kept = Tree(
        {k: v for k, v in tree.parent.items() if k not in doomed},
        {k: [c for c in v if c not in doomed] for k, v in tree.children.items()},
    )
    return kept.newest_leaf(node)


@transaction.atomic
def delete_message(*, user: Any, message_id: Any) -> Conversation:
    """Delete a message and every message under it; counters and the current branch follow.

    Their sequence numbers stay unused. Locks the conversation row, then reads the tree
    under the lock: of two concurrent deletes of one message the second finds it gone
    (NotFound), and deletes of different messages each count what the other left. A
    reply being written under the message holds it (Conflict "busy": stop it first).
    The agent forgets nothing by hand: its memory is per branch, and no branch that
    remains holds a deleted message.
    """
    found = get_message_for_user(user=user, message_id=message_id)
    conversation = lock_conversation(found.conversation_id)
    tree = Tree.of(conversation.pk)
    if found.pk not in tree.parent:
        raise NotFound(_("Message not found."))
    doomed = set(tree.subtree(found.pk))
    if ReplyRun.objects.filter(
        conversation=conversation, status=ReplyRun.Status.RUNNING, reply_to_id__in=doomed
    ).exists():
        raise Conflict(
            _("A reply is being written under this message; stop it first."), code="busy"
        )
    rows = list(conversation.messages.filter(pk__in=doomed).values_list("pk", "sequence_number"))
    conversation.current_message_id = leaf_after_delete(conversation, tree, doomed)
    conversation.save(update_fields=["current_message"])
    conversation.messages.filter(pk__in=doomed).delete()
    recount(conversation)
    for pk, seq in sorted(rows, key=lambda row: row[1]):
        events.send_on_commit(
            events.message_deleted(
                message_id=pk, conversation_id=conversation.pk, sequence_number=seq
            ),
            conversation_id=conversation.pk,
        )
    events.send_conversation_on_commit(conversation)
    return conversation


adelete_message = sync_to_async(delete_message)
