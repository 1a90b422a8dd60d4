"""A conversation as a tree of messages: the current branch, siblings, leaves, switching.

Every message has a `parent` (null for a root); what the user sees, exports by default
and what the agent remembers is the path from the root to `Conversation.current_message`.
The tree is read as one list of (id, parent, sequence number) per conversation: cheap
even for thousands of messages, and every question below is answered from it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from core.errors import NotFound

from . import events, selectors
from .models import Conversation, Message
from .selectors import get_message_for_user
from .services import lock_conversation


@dataclass(frozen=True)
class Tree:
    """One conversation's message tree (ids only), children in creation order."""

    parent: dict[uuid.UUID, uuid.UUID | None]
    children: dict[uuid.UUID | None, list[uuid.UUID]]

    @classmethod
    def of(cls, conversation_id: Any) -> Tree:
        rows = Message.objects.filter(conversation_id=conversation_id).order_by("sequence_number")
        parent: dict[uuid.UUID, uuid.UUID | None] = {}
        children: dict[uuid.UUID | None, list[uuid.UUID]] = {}
        for pk, parent_id in rows.values_list("pk", "parent_id"):
            # A parent deleted from under a row (never done by the app) makes it a root.
            parent[pk] = parent_id
            children.setdefault(parent_id, []).append(pk)
        for pk, parent_id in list(parent.items()):
            if parent_id is not None and parent_id not in parent:
                parent[pk] = None
                children.setdefault(None, []).append(pk)
        return cls(parent, children)

    def path_to(self, message_id: uuid.UUID | None) -> list[uuid.UUID]:
        """Return the ids from the root down to `message_id` (empty for None)."""
        path: list[uuid.UUID] = []
        seen: set[uuid.UUID] = set()
        node = message_id
        while node is not None and node in self.parent and node not in seen:
            seen.add(node)
            path.append(node)
            node = self.parent[node]
        path.reverse()
        return path

    def siblings(self, message_id: uuid.UUID) -> list[uuid.UUID]:
        """Return the messages with the same parent, in creation order, itself included."""
        return list(self.children.get(self.parent.get(message_id), [message_id]))

    def newest_leaf(self, message_id: uuid.UUID | None) -> uuid.UUID | None:
        """Return the leaf reached by always taking the newest child, from `message_id`."""
        node = message_id
        if node is None:
            roots = self.children.get(None)
            if not roots:
                return None
            node = roots[-1]
        while self.children.get(node):
            node = self.children[node][-1]
        return node

    def subtree(self, message_id: uuid.UUID) -> list[uuid.UUID]:
        """Return `message_id` and every message under it."""
        found, stack = [], [message_id]
        while stack:
            node = stack.pop()
            found.append(node)
            stack.extend(self.children.get(node, ()))
        return found


def current_leaf(conversation: Conversation, tree: Tree | None = None) -> uuid.UUID | None:
    """Return the current branch's leaf (the newest leaf when none is recorded)."""
    if conversation.current_message_id is not None:
        return conversation.current_message_id
    return (tree or Tree.of(conversation.pk)).newest_leaf(None)


def with_siblings(messages: Iterable[Message], tree: Tree | None = None) -> list[Message]:
    """Give each message its `sibling_ids` (message JSON carries them); one query."""
    messages = list(messages)
    if not messages:
        return messages
    trees: dict[Any, Tree] = {}
    for message in messages:
        key = message.conversation_id
        if key not in trees:
            trees[key] = tree if tree is not None else Tree.of(key)
        message.sibling_ids = [str(i) for i in trees[key].siblings(message.pk)]
    return messages


def branch_messages(
    conversation: Conversation, *, leaf_id: Any = None, tree: Tree | None = None
) -> list[Message]:
    """Return the messages of the current branch (or the one ending at `leaf_id`)."""
    tree = tree or Tree.of(conversation.pk)
    path = tree.path_to(leaf_id or current_leaf(conversation, tree))
    rows = {m.pk: m for m in Message.objects.filter(pk__in=path)}
    return with_siblings([rows[pk] for pk in path if pk in rows], tree)


def list_messages(
    *,
    conversation: Conversation,
    branch: str = "current",
    after: int | None = None,
    before: int | None = None,
    limit: int = 50,
    newest: bool = False,
) -> list[Message]:
    """Return a page of the current branch (or, with branch="all", of every message),
    oldest first, each with its `sibling_ids`."""
    tree = Tree.of(conversation.pk)
    among = None if branch == "all" else tree.path_to(current_leaf(conversation, tree))
    rows = selectors.list_messages(
        conversation=conversation,
        after=after,
        before=before,
        limit=limit,
        newest=newest,
        among=among,
    )
    return with_siblings(rows, tree)


@transaction.atomic
def switch_branch(*, user: Any, message_id: Any, conversation_id: Any = None) -> Conversation:
    """Make the newest leaf under `message_id` the current message; tell every socket.

    Raises NotFound for a message that is missing, someone else's, or (with
    `conversation_id`) in another conversation.
    """
    message = get_message_for_user(user=user, message_id=message_id)
    if conversation_id is not None and str(message.conversation_id) != str(conversation_id):
        raise NotFound("Message not found.")
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
        raise NotFound("Message not found.")
    conversation = message.conversation
    tree = Tree.of(conversation.pk)
    if message.pk in tree.path_to(current_leaf(conversation, tree)):
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
