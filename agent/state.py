"""The graph's state (checkpointed per thread) and its per-run context (injected)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage
from langchain_core.tools import BaseTool
from langgraph.graph.message import add_messages

from agent.config import AgentConfig

Route = Literal["rag", "agent"]
# retriever(query, k) -> [{document_id, document_title, section, snippet, score, text}]
Retriever = Callable[[str, int], Awaitable[list[dict[str, Any]]]]
# search_conversations(query, limit) -> [{conversation_id, title, snippet, ...}]
ConversationSearch = Callable[[str, int], Awaitable[list[dict[str, Any]]]]
# section_lookup(document, section) -> {document_title, section, text, ...} | None
SectionLookup = Callable[[str, str], Awaitable[dict[str, Any] | None]]
# recall_messages(query, present, exclude_ids) -> [{id, role, content}], best first: older
# messages of this conversation's branch holding words of `query` that `present` (what the
# model already has) lacks; `exclude_ids` are in the request already.
MessageRecall = Callable[[str, str, list[str]], Awaitable[list[dict[str, Any]]]]


class MemoryAccess(Protocol):
    """One user's memories across conversations (the caller binds the user)."""

    async def recall(self, query: str, k: int) -> list[dict[str, Any]]:
        """Return at most `k` memories ({id, text}) for this turn, most relevant first."""
        ...

    async def remember(self, text: str) -> dict[str, Any]:
        """Save a memory and return it ({id, text})."""
        ...

    async def forget(self, query: str) -> list[dict[str, Any]]:
        """Delete the memories best matching `query` (an id or words); return them."""
        ...


class Usage(TypedDict):
    input_tokens: int
    output_tokens: int
    calls: int


class AgentState(TypedDict, total=False):
    """What the checkpointer keeps for one conversation: what the database does not hold
    (summaries, calibration) and the window of recent messages, bounded by the memory
    settings. What a turn sent the model (its ledger) is stored on the reply's row."""

    messages: Annotated[list[AnyMessage], add_messages]
    # Numbered sliding window of summaries, oldest first.
    summaries: list[str]
    # Estimated-to-actual prompt size ratio, learned from the server's usage reports.
    calibration: float
    # Summarizer failures in a row, and the folds still to do without it (agent/nodes/memory.py).
    summary_failures: int
    summary_pause: int
    # Per-turn fields, reset at the start of every turn (agent/nodes/route.py).
    route: Route
    route_reason: str
    documents: list[dict[str, Any]]
    iterations: int
    tool_results: dict[str, Any]  # call signature → {"text", "failure"} (this turn)
    usage: Usage
    internal_usage: Usage
    # Per turn too: memories across conversations, and older messages recalled verbatim.
    memories: list[dict[str, Any]]
    recalled: list[dict[str, Any]]


async def find_no_documents(query: str, k: int) -> list[dict[str, Any]]:
    """Return no documents (the default retriever)."""
    return []


@dataclass(frozen=True)
class Question:
    """The user message a turn answers: its id (the thread's message id too) and text."""

    message_id: str
    text: str


@dataclass(frozen=True, kw_only=True)
class AgentContext:
    """Per-run dependencies, handed to nodes through LangGraph's runtime context."""

    config: AgentConfig
    llm: BaseChatModel
    reply_id: str
    summarizer: BaseChatModel | None = None
    retriever: Retriever = find_no_documents
    has_documents: bool = False
    search_conversations: ConversationSearch | None = None
    section_lookup: SectionLookup | None = None
    # A continue: (id, text) of the cut-off reply this turn goes on from.
    continues: tuple[str, str] | None = None
    # The user's standing instructions and the conversation's system prompt.
    instructions: str = ""
    # Images sent with this turn's message: (name, data URL; "" when the model has no
    # vision). Given to the model in this turn's calls only, never stored in memory.
    images: tuple[tuple[str, str], ...] = ()
    # The user's memories (None: memory is off) and recall of this conversation's older
    # messages (None: not available, e.g. a thread without rows).
    memory: MemoryAccess | None = None
    recall_messages: MessageRecall | None = None
    # The tools switched on for this conversation beyond the built-in ones: web search and
    # reading pages, sandboxed Python, MCP servers' tools (built by the caller).
    extra_tools: tuple[BaseTool, ...] = ()

    @property
    def summary_model(self) -> BaseChatModel:
        """Return the model that writes summaries (the chat model unless overridden)."""
        return self.summarizer or self.llm


def zero_usage() -> Usage:
    """Return an empty usage counter."""
    return {"input_tokens": 0, "output_tokens": 0, "calls": 0}


def add_usage(usage: Usage | None, message: Any) -> Usage:
    """Return `usage` plus the usage the server reported on `message`."""
    total = dict(usage or zero_usage())
    meta = getattr(message, "usage_metadata", None) or {}
    total["input_tokens"] += int(meta.get("input_tokens") or 0)
    total["output_tokens"] += int(meta.get("output_tokens") or 0)
    total["calls"] += 1
    return total  # type: ignore[return-value]
