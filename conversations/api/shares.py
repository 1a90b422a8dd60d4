"""Endpoints on share links: create, list, revoke (SPEC "Sharing")."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from ninja import Router, Schema, Status

from conversations import shares
from core.schemas import errors

router = Router(tags=["sharing"])
ERRORS = errors(400, 401, 404, 409, 413, 422, 429)


class ShareOut(Schema):
    id: str
    url: str
    conversation_id: str
    title: str
    message_count: int
    created_at: str


class SharePage(Schema):
    items: list[ShareOut]
    next_cursor: str | None = None


def share_to_dict(request: HttpRequest, share: Any) -> dict[str, Any]:
    """Return a share link as JSON, its URL absolute."""
    return {
        "id": str(share.id),
        "url": request.build_absolute_uri(reverse("shared", args=[share.token])),
        "conversation_id": str(share.conversation_id),
        "title": share.title,
        "message_count": len(share.message_ids),
        "created_at": share.created_at.isoformat(),
    }


@router.post("/conversations/{conversation_id}/shares", response={201: ShareOut, **ERRORS})
def create_share(request: HttpRequest, conversation_id: str):
    """Share the conversation's current branch as it is now: a public, read-only link."""
    share = shares.create_share(user=request.auth, conversation_id=conversation_id)
    return Status(201, share_to_dict(request, share))


@router.get("/shares", response={200: SharePage, **ERRORS})
def list_shares(request: HttpRequest, conversation_id: str | None = None):
    """List the user's share links, newest first (`conversation_id`: of one conversation)."""
    rows = shares.list_shares(user=request.auth, conversation_id=conversation_id)
    return {"items": [share_to_dict(request, s) for s in rows], "next_cursor": None}


@router.delete("/shares/{share_id}", response={204: None, **ERRORS})
def revoke_share(request: HttpRequest, share_id: str):
    """Revoke a share link: its URL answers 404 from now on."""
    shares.revoke_share(user=request.auth, share_id=share_id)
    return Status(204, None)
