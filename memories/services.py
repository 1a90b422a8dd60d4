"""A user's memories: short facts the agent may use in every conversation (SPEC: Memories).

Stored in LangGraph's store under the namespace ("memories", "<user id>"): one user's
memories are never read with another's. Every function takes the user explicitly.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, Literal, TypedDict

import numpy as np
from django.db import transaction
from django.utils.translation import gettext as _

from agent.steps import ToolFailed
from core.db_async import db_async
from core.errors import Conflict, Invalid, NotFound
from core.schemas import storable_text
from core.user_turns import hold_user
from knowledge import embeddings
from text import sensitive
from text.ranking import query_concepts, rank
from text.scoring import concept_match

from .ranking import choose_memories
from .store import get_store

NAMESPACE = "memories"
MAX_CHARS = 500
MAX_PER_USER = 1000
Origin = Literal["agent", "user"]
# How a memory came to be: the user added it on the page; the assistant saved what the user
# said (its words are the user's message's); or the assistant inferred it (its words are
# not). "" for memories saved before this was recorded.
Basis = Literal["added", "stated", "inferred", ""]
# The share of a saved fact's words the user's message must hold for it to count as stated.
STATED_SHARE = 0.8


class Source(TypedDict):
    conversation_id: str | None
    message_id: str | None


class Memory(TypedDict):
    id: str
    text: str
    created_by: Origin
    basis: Basis
    source: Source
    created_at: datetime
    updated_at: datetime


def namespace(user_id: Any) -> tuple[str, str]:
    """Return the store namespace of one user's memories."""
    return (NAMESPACE, str(int(user_id)))


def clean_text(text: Any) -> str:
    """Return a memory's text if it can be one (1–500 characters of storable text)."""
    if not isinstance(text, str):
        raise Invalid(_("A memory is text."))
    try:
        text = storable_text(text).strip()
    except ValueError:
        # storable_text's two refusals, each a whole sentence here.
        if "\x00" in text:
            raise Invalid(_("The memory must not contain NUL characters.")) from None
        raise Invalid(_("The memory must be valid Unicode text (no lone surrogates).")) from None
    if not text:
        raise Invalid(_("A memory cannot be empty."))
    if len(text) > MAX_CHARS:
        raise Invalid(_("A memory is at most %(n)s characters.") % {"n": MAX_CHARS})
    return text


def _key(memory_id: Any) -> str:
    """Return the store key of a memory id (anything else is simply not found)."""
    try:
        return uuid.UUID(str(memory_id)).hex
    except (ValueError, TypeError, AttributeError):
        raise NotFound(_("No such memory.")) from None


def _aware(value: datetime) -> datetime:
    # SQLite's store keeps naive UTC times; PostgreSQL's are aware.
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _as_memory(item: Any) -> Memory:
    value = item.value
    source = value.get("source") or {}
    return {
        "id": str(uuid.UUID(item.key)),
        "text": str(value.get("text", "")),
        "created_by": "agent" if value.get("created_by") == "agent" else "user",
        "basis": _basis_of(value),
        "source": {
            "conversation_id": source.get("conversation_id"),
            "message_id": source.get("message_id"),
        },
        "created_at": _aware(item.created_at),
        "updated_at": _aware(item.updated_at),
    }


def _basis_of(value: dict[str, Any]) -> Basis:
    if value.get("created_by") != "agent":
        return "added"
    basis = value.get("basis")
    return basis if basis in ("stated", "inferred") else ""


def basis_for(fact: str, said: str) -> Basis:
    """ "stated" when the user's message holds the fact's words, else "inferred"."""
    items = query_concepts(fact)
    if not items:
        return "stated" if fact.strip().casefold() in said.casefold() else "inferred"
    held = said.lower()
    share = sum(concept_match(c, held)[0] >= 1.0 for c in items) / len(items)
    return "stated" if share >= STATED_SHARE else "inferred"


def list_memories(*, user_id: Any) -> list[Memory]:
    """Return the user's memories, newest first."""
    items = get_store().search(namespace(user_id), limit=MAX_PER_USER + 1)
    memories = [_as_memory(item) for item in items]
    memories.sort(key=lambda m: (m["created_at"], m["id"]), reverse=True)
    return memories


def get_memory(*, user_id: Any, memory_id: Any) -> Memory:
    """Return one of the user's memories (someone else's is not found, like a missing one)."""
    item = get_store().get(namespace(user_id), _key(memory_id))
    if item is None:
        raise NotFound(_("No such memory."))
    return _as_memory(item)


def add_memory(
    *,
    user_id: Any,
    text: Any,
    created_by: Origin = "user",
    conversation_id: Any = None,
    message_id: Any = None,
    basis: Basis = "",
) -> Memory:
    """Save a memory; the same text again returns the one already saved."""
    text = clean_text(text)
    with transaction.atomic():
        hold_user(user_id)  # the same text sent twice at once is saved once
        return _add_memory(user_id, text, created_by, conversation_id, message_id, basis)


def _add_memory(
    user_id: Any, text: str, created_by: Origin, conversation_id: Any, message_id: Any, basis: Basis
) -> Memory:
    store = get_store()
    existing = store.search(namespace(user_id), limit=MAX_PER_USER + 1)
    for item in existing:
        if str(item.value.get("text", "")).casefold() == text.casefold():
            return _as_memory(item)
    if len(existing) >= MAX_PER_USER:
        raise Conflict(_("You have %(n)s memories; delete some first.") % {"n": MAX_PER_USER})
    key = uuid.uuid4().hex
    value = {
        "text": text,
        "created_by": created_by,
        "basis": basis if created_by == "agent" else "added",
        "source": {
            "conversation_id": str(conversation_id) if conversation_id else None,
            "message_id": str(message_id) if message_id else None,
        },
    }
    store.put(namespace(user_id), key, value, index=False)
    return get_memory(user_id=user_id, memory_id=key)


def edit_memory(*, user_id: Any, memory_id: Any, text: Any) -> Memory:
    """Change a memory's text (its origin and source stay)."""
    text = clean_text(text)
    store = get_store()
    key = _key(memory_id)
    item = store.get(namespace(user_id), key)
    if item is None:
        raise NotFound(_("No such memory."))
    store.put(namespace(user_id), key, {**item.value, "text": text}, index=False)
    return get_memory(user_id=user_id, memory_id=key)


def delete_memory(*, user_id: Any, memory_id: Any) -> None:
    """Delete a memory: no later request carries it."""
    store = get_store()
    key = _key(memory_id)
    if store.get(namespace(user_id), key) is None:
        raise NotFound(_("No such memory."))
    store.delete(namespace(user_id), key)


def recall_memories(*, user_id: Any, query: str, k: int) -> list[Memory]:
    """Return at most `k` memories relevant to `query` (by words and meaning), best
    first; none when nothing is."""
    found = list_memories(user_id=user_id)
    return choose_memories(query, found, k, nearness=nearness)  # type: ignore[return-value]


def nearness(query: str, texts: list[str]) -> list[float]:
    """The cosine of `query`'s meaning and each text's (memory vectors kept per process)."""
    if not texts or not query.strip():
        return [0.0] * len(texts)
    vectors = _memory_vectors(tuple(texts), embeddings.model_id())
    return [float(x) for x in vectors @ embeddings.embed([query])[0]]


# Memory texts' vectors by (model, text): a user's ≤ 1,000 memories are embedded once per
# process (~1 s for 1,000), then only the question is, each turn.
MAX_CACHED_VECTORS = 20_000
_VECTORS: dict[tuple[str, str], np.ndarray] = {}


def _memory_vectors(texts: tuple[str, ...], model: str) -> np.ndarray:
    found = {t: _VECTORS.get((model, t)) for t in texts}
    missing = [t for t, vector in found.items() if vector is None]
    if missing:
        for text, vector in zip(missing, embeddings.embed(missing), strict=True):
            found[text] = _VECTORS[(model, text)] = vector
        while len(_VECTORS) > MAX_CACHED_VECTORS:
            _VECTORS.pop(next(iter(_VECTORS)), None)
    return np.vstack([found[t] for t in texts])


def forget_memories(*, user_id: Any, query: str) -> list[Memory]:
    """Delete the memories that best match `query` (an id, or words of the fact): those
    holding the most of its words; return what was deleted."""
    memories = list_memories(user_id=user_id)
    matches = [m for m in memories if m["id"] == query.strip()]
    if not matches:
        ranked = rank(query_concepts(query), [(m["id"], m["text"]) for m in memories])
        if ranked:
            best = ranked[0].score
            ids = {r.key for r in ranked if r.score >= best - 1e-9}
            matches = [m for m in memories if m["id"] in ids]
    for memory in matches:
        delete_memory(user_id=user_id, memory_id=memory["id"])
    return matches


aadd_memory = db_async(add_memory)
arecall_memories = db_async(recall_memories)
aforget_memories = db_async(forget_memories)


# What the person is told a refused memory looked like (agent/steps.py), by the kind found.
SENSITIVE_STEPS = {
    "rrn": "memory.sensitive_id",
    "arc": "memory.sensitive_id",
    "passport": "memory.sensitive_id",
    "card": "memory.sensitive_financial",
    "bank_account": "memory.sensitive_financial",
    "phone": "memory.sensitive_contact",
    "email": "memory.sensitive_contact",
    "secret": "memory.sensitive_secret",
}


def refuse_sensitive(kinds: list[str]) -> ToolFailed:
    """Return the refusal of a memory holding sensitive information of `kinds`."""
    names = ", ".join(SENSITIVE_NAMES.get(kind, kind) for kind in kinds)
    return ToolFailed(
        SENSITIVE_STEPS.get(kinds[0], "memory.sensitive_id"),
        f"Not saved: it looks like sensitive information ({names}). Memories the assistant"
        " saves never hold it; tell the user so in their language.",
        kinds=kinds,
    )


# How the model is told what was found (its instruction, never shown).
SENSITIVE_NAMES = {
    "rrn": "a resident registration number",
    "arc": "an alien registration number",
    "passport": "a passport number",
    "card": "a card number",
    "bank_account": "a bank account number",
    "phone": "a phone number",
    "email": "an e-mail address",
    "secret": "a password or secret key",
}


class AgentMemory:
    """One user's memories as the agent sees them (agent.state.MemoryAccess); what it saves
    records the conversation and message it came from."""

    def __init__(
        self,
        *,
        user_id: Any,
        conversation_id: Any = None,
        message_id: Any = None,
        said: str = "",
    ):
        self.user_id = user_id
        self.conversation_id = conversation_id
        self.message_id = message_id
        self.said = said  # the user's message of the turn: what a saved fact is held against

    async def recall(self, query: str, k: int) -> list[dict[str, Any]]:
        """Return this turn's memories ({id, text})."""
        found = await arecall_memories(user_id=self.user_id, query=query, k=k)
        return [{"id": m["id"], "text": m["text"]} for m in found]

    async def remember(self, text: str) -> dict[str, Any]:
        """Save what the agent was told; a refusal raises ToolFailed (the person hears why).

        Never sensitive information (card, account, ID or passport numbers, secrets…),
        even one the user confirmed sending: a message is one conversation's, a memory
        reaches every conversation. The user may still add one on the memory page."""
        found = sensitive.find(str(text or ""))
        if found:
            raise refuse_sensitive(sorted({f.kind for f in found}, key=sensitive.KINDS.index))
        # A masked fact ("my card is [card]") is sensitive information that was hidden:
        # it is never worth keeping, and would tell every conversation that it existed.
        if masked := sensitive.masked_kinds(str(text or "")):
            raise refuse_sensitive(masked)
        try:
            saved = await aadd_memory(
                user_id=self.user_id,
                text=text,
                created_by="agent",
                conversation_id=self.conversation_id,
                message_id=self.message_id,
                basis=basis_for(str(text or ""), self.said),
            )
        except Invalid as exc:
            code = "memory.too_long" if len(str(text).strip()) > MAX_CHARS else None
            raise ToolFailed(
                code or "tool.remember.failed", f"Not saved: {exc.message}", limit=MAX_CHARS
            ) from exc
        except Conflict as exc:
            raise ToolFailed(
                "memory.full", f"Not saved: {exc.message}", limit=MAX_PER_USER
            ) from exc
        return {"id": saved["id"], "text": saved["text"]}

    async def forget(self, query: str) -> list[dict[str, Any]]:
        """Delete the memories best matching `query`."""
        removed = await aforget_memories(user_id=self.user_id, query=query)
        return [{"id": m["id"], "text": m["text"]} for m in removed]
