"""Endpoints on messages: list, send, search, feedback, report, delete."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django.utils.translation import gettext as _
from ninja import Query, Router, Status

from conversations import branches, feedback, replies, search, selectors
from conversations.realtime.ratelimit import check_rate
from conversations.serializers import message_to_dict
from core.errors import Invalid

from .conversations import ERRORS
from .schemas import (
    AssistantReplyOut,
    EditIn,
    FeedbackIn,
    FeedbackOut,
    MessageListParams,
    MessagePage,
    MessageSendIn,
    RegenerateIn,
    ReplyOut,
    ReportIn,
    ReportOut,
    SearchPage,
    SearchParams,
)

router = Router(tags=["messages"])
MAX_SEQ = 2**31 - 1


@router.get("/conversations/{conversation_id}/messages", response={200: MessagePage, **ERRORS})
def list_messages(
    request: HttpRequest,
    conversation_id: str,
    params: Query[MessageListParams],
):
    """List the current branch's messages oldest first (`branch=all`: every message);
    `after`/`before` are sequence numbers."""
    conversation = selectors.get_conversation_for_user(
        user=request.auth, conversation_id=conversation_id
    )
    # Not core.pagination: SPEC makes this cursor a bare sequence number, interchangeable
    # with `after` (unique per conversation, so no id tiebreak), not an opaque keyed one;
    # a `before`-only page reads backwards and has no next cursor; and the rows are a branch
    # path, dressed with siblings and feedback (branches.list_messages), not one queryset.
    after, before, limit, cursor = params.after, params.before, params.limit, params.cursor
    if cursor is not None:
        if not cursor.isdigit() or int(cursor) > MAX_SEQ:
            raise Invalid(_("The cursor is not valid for this query."), code="bad_cursor")
        after = int(cursor)
    # With only `before`, the page is the one just before it (scrolling back).
    newest = before is not None and after is None
    rows = branches.list_messages(
        conversation=conversation,
        branch=params.branch,
        after=after,
        before=before,
        limit=limit + 1,
        newest=newest,
        role=params.role,
        part=params.part,
        has_tool=params.has_tool,
    )
    more = len(rows) > limit
    rows = rows[1:] if newest and more else rows[:limit]
    next_cursor = str(rows[-1].sequence_number) if more and not newest else None
    return {"items": [message_to_dict(m) for m in rows], "next_cursor": next_cursor}


@router.post(
    "/conversations/{conversation_id}/messages",
    response={200: ReplyOut, 201: ReplyOut, **ERRORS},
)
async def send_message(request: HttpRequest, conversation_id: str, payload: MessageSendIn):
    """Post a user message and wait for the agent's stored reply (also sent to open sockets);
    `models: [a, b]`: two replies at once, side by side, siblings answering it.

    201 when the message is new; 200 when `client_id` was seen before (nothing new stored).
    """
    started = await replies.start_reply(
        user=request.auth, ask=replies.Ask(message=payload), conversation_id=conversation_id
    )
    return Status(201 if started.created else 200, await _replies_json(started))


@router.post("/messages/{message_id}/regenerate", response={201: AssistantReplyOut, **ERRORS})
async def regenerate_message(request: HttpRequest, message_id: str, payload: RegenerateIn):
    """Answer again the user message this reply answers (or this user message): a new
    sibling reply, and the current branch moves to it; `model` (an id `GET /models` lists)
    writes this reply only. Waits for the stored reply."""
    ask = replies.Ask.regenerate(message_id, model=payload.model)
    started = await replies.start_reply(user=request.auth, ask=ask)
    return Status(201, {"assistant_message": await _reply_json(started)})


@router.post("/messages/{message_id}/edit", response={200: ReplyOut, 201: ReplyOut, **ERRORS})
async def edit_message(request: HttpRequest, message_id: str, payload: EditIn):
    """Store new text beside one of your messages (a sibling) and answer it; the original
    and its replies stay on their branch. 200 when `client_id` was seen before."""
    started = await replies.start_reply(
        user=request.auth, ask=replies.Ask("edit", payload, message_id)
    )
    return Status(201 if started.created else 200, await _replies_json(started))


@router.post("/messages/{message_id}/continue", response={201: AssistantReplyOut, **ERRORS})
async def continue_message(request: HttpRequest, message_id: str):
    """Go on from a reply that was cut short: a new sibling holding the whole text."""
    ask = replies.Ask.continue_from(message_id)
    started = await replies.start_reply(user=request.auth, ask=ask)
    return Status(201, {"assistant_message": await _reply_json(started)})


async def _replies_json(started: replies.StartedReply) -> dict:
    """The user's message and the stored replies (two, side by side)."""
    stored = [message_to_dict(m) for m in await started.assistant_messages() if m is not None]
    return {
        "user_message": message_to_dict(started.user_message),
        "assistant_message": stored[0] if stored else None,
        "assistant_messages": stored,
    }


async def _reply_json(started: replies.StartedReply) -> dict | None:
    reply = await started.assistant_message()
    return message_to_dict(reply) if reply is not None else None


@router.get("/search/messages", response={200: SearchPage, **ERRORS})
def search_messages(request: HttpRequest, params: Query[SearchParams]):
    """Search the user's messages: best first, snippets with the matches in <mark>
    (at most CHAT_SEARCH_RATE_LIMIT searches a user, else 429 with Retry-After)."""
    check_rate(user_id=request.auth.pk, rate=settings.CHAT_SEARCH_RATE_LIMIT, what="searches")
    page = search.search_messages(user=request.auth, **params.dict())
    return {"items": [hit.__dict__ for hit in page.items], "next_cursor": page.next_cursor}


@router.post("/messages/{message_id}/feedback", response={200: FeedbackOut, **ERRORS})
def rate_message(request: HttpRequest, message_id: str, payload: FeedbackIn):
    """Rate a message up or down, with an optional comment; rating again replaces it."""
    row = feedback.rate_message(
        user=request.auth,
        message_id=message_id,
        rating=payload.rating,
        comment=payload.comment,
        reasons=payload.reasons,
    )
    return {
        "message_id": str(row.message_id),
        "rating": row.rating,
        "comment": row.comment,
        "reasons": row.reasons,
        "updated_at": row.updated_at,
    }


@router.post("/messages/{message_id}/report", response={200: ReportOut, **ERRORS})
def report_message(request: HttpRequest, message_id: str, payload: ReportIn):
    """Report a message to the moderators."""
    message = feedback.report_message(
        user=request.auth, message_id=message_id, reason=payload.reason
    )
    return {
        "message_id": str(message.id),
        "is_flagged": message.is_flagged,
        "flag_reason": message.flag_reason,
    }


@router.delete("/messages/{message_id}", response={204: None, **ERRORS})
async def delete_message(request: HttpRequest, message_id: str):
    """Delete a message and everything under it (its siblings stay); counters and the
    current branch follow, and no branch the agent remembers holds it any more."""
    await branches.adelete_message(user=request.auth, message_id=message_id)
    return Status(204, None)
