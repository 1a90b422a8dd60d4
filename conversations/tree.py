"""A conversation's messages as a tree: paths, siblings, leaves (reads only).

The tree is read as one list of (id, parent) per conversation, in creation order: cheap
even for thousands of messages, and every question below is answered from it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .models import Conversation, Message


@dataclass(frozen=True)
class Tree:
    """One conversation's message tree (ids only), children in creation order."""

    parent: dict[uuid.UUID, uuid.UUID | None]
    children: dict[uuid.UUID | None, list[uuid.UUID]]

    @classmethod
    def of(cls, conversation_id: Any, *, since: int | None = None) -> Tree:
        """Read the tree, or only its messages numbered `since` or later: a message is
        numbered after its parent, so a path there is the whole path's tail down from
        that number (a message whose parent is older is a root of that tree)."""
        rows = Message.objects.filter(conversation_id=conversation_id).order_by("sequence_number")
        if since is not None:
            rows = rows.filter(sequence_number__gte=since)
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


def current_branch(conversation: Conversation, tree: Tree | None = None) -> list[uuid.UUID]:
    """Return the ids of the current branch, root first (empty for a new conversation)."""
    tree = tree or Tree.of(conversation.pk)
    return tree.path_to(current_leaf(conversation, tree))


def branch_tail(conversation: Conversation, limit: int) -> list[uuid.UUID]:
    """Return the ids of the current branch's newest `limit` messages, root side first.

    Only the conversation's newest messages are read: a window of its latest numbers,
    twice as wide each time until it holds them (without branches, the first one)."""
    leaf, span = conversation.current_message_id, limit
    while True:
        since = conversation.last_sequence_number - span + 1
        if leaf is None or since <= 1:
            return current_branch(conversation)[-limit:]
        path = Tree.of(conversation.pk, since=since).path_to(leaf)
        if len(path) >= limit:
            return path[-limit:]
        span *= 2


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


def sibling_ids(message: Message) -> list[str]:
    """Return the ids of the messages with `message`'s parent, oldest first (one query)."""
    siblings = Message.objects.filter(
        conversation_id=message.conversation_id, parent_id=message.parent_id
    ).order_by("sequence_number")
    return [str(pk) for pk in siblings.values_list("pk", flat=True)]
