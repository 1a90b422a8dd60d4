"""`/memories`: list, add, read, edit and delete the user's memories (SPEC: Memories)."""

from __future__ import annotations

from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Field, Router, Schema, Status

from core.schemas import Input, Text, errors

from . import services

router = Router(tags=["memories"])
ERRORS = errors(400, 401, 404, 409, 413, 422, 429)
MemoryText = Annotated[Text, Field(min_length=1, max_length=services.MAX_CHARS)]


class SourceOut(Schema):
    conversation_id: str | None
    message_id: str | None


class MemoryOut(Schema):
    id: str
    text: str
    created_by: str = Field(description="agent (saved by the remember tool) or user")
    basis: str = Field(
        description="added (by the user), stated (the assistant saved the user's own words), "
        "inferred (the assistant's words), or empty (saved before this was recorded)"
    )
    source: SourceOut = Field(description="the conversation and message it came from")
    created_at: str
    updated_at: str


class MemoryPage(Schema):
    items: list[MemoryOut]
    next_cursor: str | None = None


class MemoryIn(Input):
    text: MemoryText


def memory_to_dict(memory: services.Memory) -> dict[str, Any]:
    """Return a memory as JSON."""
    return {
        **memory,
        "created_at": memory["created_at"].isoformat(),
        "updated_at": memory["updated_at"].isoformat(),
    }


@router.get("/memories", response={200: MemoryPage, **ERRORS})
def list_memories(request: HttpRequest):
    """List your memories, newest first."""
    items = services.list_memories(user_id=request.auth.pk)
    return {"items": [memory_to_dict(m) for m in items], "next_cursor": None}


@router.post("/memories", response={201: MemoryOut, **ERRORS})
def add_memory(request: HttpRequest, payload: MemoryIn):
    """Add a memory (the same text again answers the one already saved)."""
    memory = services.add_memory(user_id=request.auth.pk, text=payload.text)
    return Status(201, memory_to_dict(memory))


@router.get("/memories/{memory_id}", response={200: MemoryOut, **ERRORS})
def read_memory(request: HttpRequest, memory_id: str):
    """Read one memory."""
    return memory_to_dict(services.get_memory(user_id=request.auth.pk, memory_id=memory_id))


@router.patch("/memories/{memory_id}", response={200: MemoryOut, **ERRORS})
def edit_memory(request: HttpRequest, memory_id: str, payload: MemoryIn):
    """Change a memory's text."""
    memory = services.edit_memory(user_id=request.auth.pk, memory_id=memory_id, text=payload.text)
    return memory_to_dict(memory)


@router.delete("/memories/{memory_id}", response={204: None, **ERRORS})
def delete_memory(request: HttpRequest, memory_id: str):
    """Delete a memory: it is in no later request."""
    services.delete_memory(user_id=request.auth.pk, memory_id=memory_id)
    return Status(204, None)
