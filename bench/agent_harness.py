"""One agent turn without Django: the real Turn, with in-memory stand-ins for the database.

Documents are one fixed passage (`retriever`), older messages a `Transcript` recalled with
the app's own ranking (text/ranking.py), and memories live in LangGraph's InMemoryStore
(`BenchMemory`, ranked by memories/ranking.py with the bundled embedding model).
"""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.store.memory import InMemoryStore

from agent.config import AgentConfig
from agent.llm import get_chat_model
from agent.runner import Turn
from agent.state import AgentContext, Question
from agent.threads import ThreadRef
from knowledge.embeddings import BundledEmbedder
from memories.ranking import choose_memories
from text.ranking import select_recalled


async def retriever(query: str, k: int) -> list[dict[str, Any]]:
    """Return one fixed passage of the leave policy."""
    return [
        {
            "document_id": "policy",
            "document_title": "휴가 정책",
            "section": "연차",
            "snippet": "연차 15일",
            "score": 0.9,
            "text": "연차는 15일, 병가는 10일입니다.",
        }
    ]


class Transcript:
    """Every message of one conversation, for recall (what the database holds)."""

    def __init__(self) -> None:
        self.messages: list[dict[str, str]] = []

    async def recall(self, query: str, present: str, exclude: list[str]) -> list[dict[str, str]]:
        """Recall as conversations/replies/recall.py does, over this transcript."""
        skip = set(exclude)
        older = [m for m in reversed(self.messages) if m["id"] not in skip]
        return select_recalled(query, present, older, population=len(older))


_EMBEDDER = BundledEmbedder()


def _nearness(query: str, texts: list[str]) -> list[float]:
    """As memories.services.nearness, with the bundled model (no Django here)."""
    return [float(x) for x in _EMBEDDER.embed(texts) @ _EMBEDDER.embed([query])[0]]


class BenchMemory:
    """One user's memories in LangGraph's InMemoryStore (agent.state.MemoryAccess)."""

    def __init__(self, store: InMemoryStore, user_id: int) -> None:
        self.store, self.namespace = store, ("memories", str(user_id))

    async def _all(self) -> list[dict[str, Any]]:
        items = await self.store.asearch(self.namespace, limit=1000)
        items.sort(key=lambda i: i.created_at, reverse=True)
        return [{"id": i.key, "text": i.value["text"]} for i in items]

    async def recall(self, query: str, k: int) -> list[dict[str, Any]]:
        return choose_memories(query, await self._all(), k, nearness=_nearness)

    async def remember(self, text: str) -> dict[str, Any]:
        key = uuid.uuid4().hex
        await self.store.aput(self.namespace, key, {"text": text})
        return {"id": key, "text": text}

    async def forget(self, query: str) -> list[dict[str, Any]]:
        return []


async def run(
    config: AgentConfig,
    saver: Any,
    thread: str,
    text: str,
    *,
    transcript: Transcript | None = None,
    memory: BenchMemory | None = None,
) -> dict[str, Any]:
    """Run one turn (user with documents) and return its finished event."""
    user_id, reply_id = str(uuid.uuid4()), str(uuid.uuid4())
    context = AgentContext(
        config=config,
        llm=get_chat_model(config),
        reply_id=reply_id,
        retriever=retriever,
        has_documents=True,
        recall_messages=transcript.recall if transcript is not None else None,
        memory=memory,
    )
    turn = Turn(
        context,
        thread=ThreadRef(thread),
        question=Question(user_id, text),
        checkpointer=saver,
    )
    events = [event async for event in turn.events()]
    if transcript is not None:
        transcript.messages.append({"id": user_id, "role": "user", "content": text})
        transcript.messages.append(
            {"id": reply_id, "role": "assistant", "content": events[-1]["content"]}
        )
    return events[-1]
