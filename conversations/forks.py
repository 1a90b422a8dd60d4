"""Fork a conversation at one of its messages: rows copied, agent memory as of that point."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils.translation import gettext as _

from core.errors import NotFound

from . import events
from .models import TITLE_MAX_LENGTH, Conversation, Message
from .replies import threads
from .selectors import get_conversation_for_user, get_message_for_user
from .services import recount
from .tree import Tree

logger = logging.getLogger(__name__)

FORK_SUFFIX = " (fork)"
COPY_BATCH = 1000


def fork_title(title: str) -> str:
    """Return "<title> (fork)", shortened to fit the title column."""
    return title[: TITLE_MAX_LENGTH - len(FORK_SUFFIX)] + FORK_SUFFIX


@transaction.atomic
def fork_conversation(
    *, user: Any, conversation_id: Any, from_message_id: Any, title: str | None = None
) -> Conversation:
    """Create the user's copy of a conversation holding the branch down to one message.

    The copy keeps role, content, parts, metadata and timestamps under new ids; it links
    to its parent and to the message it was forked from. The agent's memory is copied
    separately (`afork_conversation`), after this transaction commits.
    """
    source = get_conversation_for_user(user=user, conversation_id=conversation_id)
    message = get_message_for_user(user=user, message_id=from_message_id)
    if message.conversation_id != source.id:
        raise NotFound(_("Message not found."))
    fork = Conversation.objects.create(
        created_by=user,
        title=title or fork_title(source.title or "Conversation"),
        description=source.description,
        project=source.project,
        service_id=source.service_id,
        model=source.model,
        system_prompt=source.system_prompt,
        temperature=source.temperature,
        preset_id=source.preset_id,  # a branch of the same assistant
        tools=source.tools,
        # A temporary conversation's words stay out of lists and memories in its forks too.
        temporary=source.temporary,
        parent_conversation=source,
        forked_from_message=message,
    )
    _copy_messages(source=source, fork=fork, up_to=message)
    recount(fork, also_save=("current_message",))
    events.send_on_commit(events.conversation_updated(fork), user_id=user.pk)
    return fork


def _copy_messages(*, source: Conversation, fork: Conversation, up_to: Message) -> None:
    """Copy the branch from the root down to `up_to`, as one branch, numbered as it was."""
    path = Tree.of(source.pk).path_to(up_to.pk)
    originals = {m.pk: m for m in source.messages.filter(pk__in=path)}
    copies: list[Message] = []
    for pk in path:
        m = originals[pk]
        copies.append(
            Message(
                id=uuid.uuid4(),
                conversation=fork,
                role=m.role,
                content=m.content,
                parts=m.parts,
                model=m.model,
                tokens_used=m.tokens_used,
                finish_reason=m.finish_reason,
                metadata=m.metadata,
                sequence_number=m.sequence_number,
                created_by_id=m.created_by_id,
                parent_id=copies[-1].pk if copies else None,
            )
        )
    Message.objects.bulk_create(copies, batch_size=COPY_BATCH)
    if copies:
        fork.current_message_id = copies[-1].pk
    # auto_now_add stamped the copies with "now"; give them their originals' times.
    original = source.messages.filter(sequence_number=OuterRef("sequence_number"))
    fork.messages.update(created_at=Subquery(original.values("created_at")[:1]))


async def afork_conversation(
    *, user: Any, conversation_id: Any, from_message_id: Any, title: str | None = None
) -> Conversation:
    """Fork a conversation, then give the fork the agent's memory as of that message."""
    fork = await sync_to_async(fork_conversation)(
        user=user, conversation_id=conversation_id, from_message_id=from_message_id, title=title
    )
    try:
        await threads.acopy_agent_thread(
            source_id=str(fork.parent_conversation_id),
            target_id=str(fork.id),
            up_to=fork.forked_from_message,
        )
    except Exception:
        # The rows are the record; a fork whose memory could not be copied starts with
        # an empty thread (it never learns anything said after the fork point).
        logger.exception("could not copy agent thread into fork %s", fork.id)
    return fork
