"""Every realtime frame the server sends is built here, and leaves through here.

Builders are pure and typed (the TypedDicts of realtime/frames.py, one per frame type in
docs/websocket-protocol.md). Senders:

- `send_on_commit(frame, ...)` from sync services, inside their transaction: the frame
  leaves once the transaction commits (Zulip's `send_event_on_commit`), never for a
  write that rolled back;
- `publish(frame, ...)` from the server loop, by a caller whose writes are committed
  (the reply orchestrator, after its transaction returned);
- the consumer sends `error` and `pong`, built here too, to the socket that asked, and
  `sync.state` through `publish(..., to=socket)`, in order with the live frames.

Conversation frames and a user's list-page frames go through this process's hub (local
sockets first, then one publish for other processes, which forward it to their own
sockets); outside the server (a management command) straight to the channel layer, whence
every process's hub forwards them to its sockets.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from agent.events import ThinkingEvent
from core.groups import conversation_group, user_group

from .models import Conversation, Message
from .realtime import delivery, progress
from .realtime.frames import (
    SYNC_PAGE_BYTES,
    ConversationDeletedFrame,
    ConversationUpdatedFrame,
    ErrorCode,
    ErrorFrame,
    Generation,
    GenerationFinishedFrame,
    GenerationStartedFrame,
    MessageCreatedFrame,
    MessageDeletedFrame,
    PongFrame,
    ReasoningFrame,
    SourcesFrame,
    SyncStateFrame,
    ThinkingFrame,
    TokenFrame,
    Usage,
    abridged,
    dumps,
)
from .realtime.hub import current_hub, get_hub
from .serializers import conversation_to_dict, message_to_dict

logger = logging.getLogger(__name__)


# --- builders -------------------------------------------------------------------------
def message_created(message: Message) -> MessageCreatedFrame:
    """A message was stored."""
    return {"type": "message.created", "message": abridged(message_to_dict(message))}


def message_deleted(
    *, message_id: Any, conversation_id: Any, sequence_number: int
) -> MessageDeletedFrame:
    """A message was deleted (its sequence number stays unused)."""
    return {
        "type": "message.deleted",
        "message_id": str(message_id),
        "conversation_id": str(conversation_id),
        "sequence_number": sequence_number,
    }


def conversation_updated(conversation: Conversation) -> ConversationUpdatedFrame:
    """A conversation's fields or counters changed."""
    return {"type": "conversation.updated", "conversation": conversation_to_dict(conversation)}


def conversation_deleted(conversation_id: Any) -> ConversationDeletedFrame:
    """A conversation was deleted; its sockets close with 4404 after this frame."""
    return {"type": "conversation.deleted", "conversation_id": str(conversation_id)}


def generation_started(
    *, run_id: Any, reply_to: Any, continues: Message | None = None, model: str | None = None
) -> GenerationStartedFrame:
    """A reply began; `run_id` is also the id its stored message will have.

    A continue names the cut-off reply it goes on from: its text is the start of the new
    reply, and the first `token` index is that text's length. A reply asked of a model
    other than the conversation's (side by side, a regenerate with a model) names it.
    """
    frame: GenerationStartedFrame = {
        "type": "generation.started",
        "run_id": str(run_id),
        "reply_to": str(reply_to),
    }
    if model:
        frame["model"] = model
    if continues is not None:
        frame["continues"] = str(continues.pk)
        frame["text_offset"] = len(continues.content)
    return frame


def thinking(*, run_id: Any, event: ThinkingEvent) -> ThinkingFrame:
    """Progress of a reply: one step (agent/steps.py), its code and params, and its words."""
    return {
        "type": "thinking",
        "run_id": str(run_id),
        "step": event["step"],
        "code": event["code"],
        "params": event["params"],
        "content": event["content"],
    }


def token(*, run_id: Any, index: int, text: str) -> TokenFrame:
    """Reply text at character offset `index`."""
    return {"type": "token", "run_id": str(run_id), "index": index, "text": text}


delivery.build_tokens_with(token)  # the hub cuts a reply's text per socket with it


def reasoning(*, run_id: Any, index: int, text: str) -> ReasoningFrame:
    """The model's reasoning at character offset `index` of the reasoning so far."""
    return {"type": "reasoning", "run_id": str(run_id), "index": index, "text": text}


def sources(*, run_id: Any, items: list[dict[str, Any]]) -> SourcesFrame:
    """Documents a reply used."""
    return {"type": "sources", "run_id": str(run_id), "items": items}


def generation_finished(message: Message, *, usage: Usage | None) -> GenerationFinishedFrame:
    """The reply is stored: the last frame of a run."""
    return {
        "type": "generation.finished",
        "run_id": str(message.pk),
        "message": abridged(message_to_dict(message)),
        "finish_reason": message.finish_reason,
        "usage": usage or {"input_tokens": 0, "output_tokens": message.tokens_used},
    }


def sync_state(
    messages: Iterable[Message],
    generations: list[Generation],
    current_message_id: Any,
    *,
    has_more: bool = False,
) -> SyncStateFrame:
    """The answer to `sync`: stored messages after the cursor (every branch, oldest first,
    at most SYNC_PAGE_BYTES of them: `has_more` says others follow), the replies in
    progress (two side by side; `generation` is the first) and the current branch's leaf."""
    page: list[dict[str, Any]] = []
    size = 0
    for message in messages:
        item = abridged(message_to_dict(message))
        size += len(dumps(item).encode())
        if page and size > SYNC_PAGE_BYTES:
            has_more = True
            break
        page.append(item)
    return {
        "type": "sync.state",
        "messages": page,
        "generation": generations[0] if generations else None,
        "generations": generations,
        "current_message_id": str(current_message_id) if current_message_id else None,
        "has_more": has_more,
    }


def error(
    code: ErrorCode,
    detail: str,
    *,
    retry_after: int | None = None,
    findings: list[dict[str, Any]] | None = None,
    can_confirm: bool | None = None,
) -> ErrorFrame:
    """An error for the socket that sent the frame."""
    frame: ErrorFrame = {"type": "error", "code": code, "detail": detail}
    if retry_after is not None:
        frame["retry_after"] = retry_after
    if findings is not None:
        frame["findings"] = findings
    if can_confirm is not None:
        frame["can_confirm"] = can_confirm
    return frame


def pong() -> PongFrame:
    """The answer to `ping`."""
    return {"type": "pong"}


# --- senders --------------------------------------------------------------------------
def send_on_commit(frame: Any, *, conversation_id: Any = None, user_id: Any = None) -> None:
    """Send `frame` to a conversation's sockets and/or a user's list pages after commit."""
    user_id = _list_audience(frame, user_id)
    transaction.on_commit(lambda: _send_from_thread(frame, conversation_id, user_id))


def publish(
    frame: Any,
    *,
    conversation_id: Any = None,
    user_id: Any = None,
    append: progress.Append | None = None,
    clear_run: Any = None,
    local_only: bool = False,
    on_sent: Callable[[], None] | None = None,
    to: Any = None,
) -> None:
    """Send `frame` now, from the server loop (the caller's writes are committed).

    `append` / `clear_run` update the reply in progress in order with the frames
    (see `Hub.post`); `local_only` keeps it to this process's sockets, `to` to one of
    them (a `sync.state`, in order with the conversation's other frames); `on_sent` is
    called once the frame has been handed to them.
    """
    hub = get_hub()
    user_id = _list_audience(frame, user_id)
    if conversation_id is not None:
        hub.post(
            conversation_id,
            frame,
            append=append,
            clear_run=clear_run,
            local_only=local_only,
            on_sent=on_sent,
            to=to,
        )
    if user_id is not None:
        hub.post_to_lists(user_id, frame)


def _list_audience(frame: Any, user_id: Any) -> Any:
    """Return whose list pages hear `frame`: nobody's for a temporary conversation, which
    is never listed (its own sockets still hear it)."""
    if (
        isinstance(frame, dict)
        and frame.get("type") == "conversation.updated"
        and frame["conversation"].get("temporary")
    ):
        return None
    return user_id


def _send_from_thread(frame: Any, conversation_id: Any, user_id: Any) -> None:
    hub = current_hub()
    if hub is not None:  # the server runs in this process: its loop sends, in order
        hub.loop.call_soon_threadsafe(
            lambda: publish(frame, conversation_id=conversation_id, user_id=user_id)
        )
        return
    # A management command or a sync test: straight to the channel layer.
    layer = get_channel_layer()
    if layer is None:
        return
    groups = []
    if conversation_id is not None:
        groups.append(conversation_group(conversation_id))
    if user_id is not None:
        groups.append(user_group(user_id))
    for group in groups:
        try:
            async_to_sync(layer.group_send)(
                group, {"type": "chat.frames", "frames": [frame], "group": group}
            )
        except Exception:  # a realtime hiccup must never undo a stored write
            logger.exception("realtime event to %s failed", group)


def send_conversation_on_commit(conversation: Conversation) -> None:
    """Announce a conversation's new state to its sockets and its owner's list pages."""
    send_on_commit(
        conversation_updated(conversation),
        conversation_id=conversation.pk,
        user_id=conversation.created_by_id,
    )
