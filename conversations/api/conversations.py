"""Endpoints on conversations: list, create, read, change, delete, fork, summarize (imports,
exports and the bulk actions: transfers/api.py)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest
from ninja import Query, Router, Status

from conversations import (
    branches,
    forks,
    search,
    selectors,
    services,
)
from conversations.replies import summaries
from conversations.replies.start import start_conversation
from conversations.serializers import conversation_to_dict
from core.schemas import errors

from .schemas import (
    ConversationCreatedOut,
    ConversationCreateIn,
    ConversationDetailOut,
    ConversationFilters,
    ConversationOut,
    ConversationPage,
    ConversationPatchIn,
    ForkIn,
    SummarizeIn,
    SwitchIn,
)

router = Router(tags=["conversations"])
ERRORS = errors(400, 401, 404, 409, 413, 422, 429)


def _detail(conversation: Any) -> dict[str, Any]:
    return conversation_to_dict(conversation) | {
        "forks": selectors.list_forks(conversation=conversation)
    }


def _owned(request: HttpRequest, conversation_id: str) -> Any:
    return selectors.get_conversation_for_user(user=request.auth, conversation_id=conversation_id)


@router.get("/conversations", response={200: ConversationPage, **ERRORS})
def list_conversations(request: HttpRequest, filters: Query[ConversationFilters]):
    """List the user's conversations: search, filters, sort, keyset pages."""
    page = search.list_conversations(user=request.auth, **filters.dict())
    return {"items": [conversation_to_dict(c) for c in page.items], "next_cursor": page.next_cursor}


@router.post("/conversations", response={201: ConversationCreatedOut, **ERRORS})
async def create_conversation(request: HttpRequest, payload: ConversationCreateIn):
    """Create a conversation, with its first message when `initial_message` is given.

    The conversation and that message are stored together: a message refused (too long,
    NUL, sensitive information without `confirm_sensitive`, rate limited, an attachment
    that is not an unsent upload of it) creates no conversation. The reply then runs in
    the background exactly as for a websocket `message.send`: follow it on the socket
    (`sync` shows the text so far) or with `GET …/messages`. `temporary` is set here only.
    """
    conversation, started = await start_conversation(
        user=request.auth, new=payload.new_conversation(), message=payload.initial_message
    )
    body = await sync_to_async(conversation_to_dict)(conversation)
    if started is not None:
        body |= {"initial_message_id": str(started.user_message.pk), "run_id": str(started.run_id)}
    return Status(201, body)


@router.get("/conversations/{conversation_id}", response={200: ConversationDetailOut, **ERRORS})
def get_conversation(request: HttpRequest, conversation_id: str):
    """Read a conversation with the ids and titles of its forks."""
    return _detail(_owned(request, conversation_id))


@router.patch("/conversations/{conversation_id}", response={200: ConversationOut, **ERRORS})
def update_conversation(request: HttpRequest, conversation_id: str, payload: ConversationPatchIn):
    """Change title, description, status, project, service_id, model (an id `GET /models`
    lists, blank for the default; another → 422), system prompt, temperature, pinned or
    tools (ids `GET /tools` lists; null: the owner's default), or the current message (the
    branch through it is shown, as `POST …/switch`: choosing one of two answers side by
    side). `temporary` is set only at creation."""
    conversation = _owned(request, conversation_id)
    changes = payload.dict(exclude_unset=True)
    if current := changes.pop("current_message_id", None):
        conversation = branches.switch_branch(
            user=request.auth, message_id=current, conversation_id=conversation_id
        )
    for field in (
        "title",
        "description",
        "status",
        "service_id",
        "model",
        "system_prompt",
        "pinned",
    ):
        if field in changes and changes[field] is None:
            del changes[field]  # null means "leave as is" for these; project_id and
            # temperature null clear them
    if "project_id" in changes:
        changes["project"] = changes.pop("project_id")
    if changes:
        conversation = services.update_conversation(conversation=conversation, **changes)
    return conversation_to_dict(conversation)


@router.delete("/conversations/{conversation_id}", response={204: None, **ERRORS})
def delete_conversation(request: HttpRequest, conversation_id: str):
    """Delete a conversation, its messages and its agent thread."""
    services.delete_conversation(conversation=_owned(request, conversation_id))
    return Status(204, None)


@router.post("/conversations/{conversation_id}/switch", response={200: ConversationOut, **ERRORS})
def switch_branch(request: HttpRequest, conversation_id: str, payload: SwitchIn):
    """Show the branch through a message: the newest leaf under it becomes current."""
    _owned(request, conversation_id)
    conversation = branches.switch_branch(
        user=request.auth, message_id=payload.message_id, conversation_id=conversation_id
    )
    return conversation_to_dict(conversation)


@router.post("/conversations/{conversation_id}/fork", response={201: ConversationOut, **ERRORS})
async def fork_conversation(request: HttpRequest, conversation_id: str, payload: ForkIn):
    """Fork at a message: a new conversation with the branch down to it and the agent's
    memory of that branch."""
    fork = await forks.afork_conversation(
        user=request.auth,
        conversation_id=conversation_id,
        from_message_id=payload.from_message_id,
        title=payload.title,
    )
    return Status(201, conversation_to_dict(fork))


@router.post(
    "/conversations/{conversation_id}/summarize", response={200: ConversationOut, **ERRORS}
)
async def summarize_conversation(
    request: HttpRequest, conversation_id: str, payload: SummarizeIn | None = None
):
    """Write the conversation's summary: main points, decisions, next actions."""
    conversation = await selectors.aget_conversation_for_user(
        user=request.auth, conversation_id=conversation_id
    )
    max_words = payload.max_length if payload else None
    conversation = await summaries.asummarize_conversation(
        conversation=conversation, max_words=max_words
    )
    return await sync_to_async(conversation_to_dict)(conversation)
