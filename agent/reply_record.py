"""What one turn's progress records add up to: the reply's text and the model's reasoning
(with how long it thought), the reply's parts (steps, tool calls and results, sources),
the images its tools made and the context ledger. `agent.runner.Turn` feeds it."""

from __future__ import annotations

import asyncio
from typing import Any

from agent.events import AgentEvent, ReasoningEvent, SourcesEvent, ThinkingEvent, TokenEvent
from agent.steps import COUNTING_STEPS

STEP_FIELDS = ("step", "code", "params", "content")
MAX_IMAGES = 8  # a reply keeps at most this many images its tools made


class ReplyRecord:
    """The reply as it stands, built from the records the nodes emit, in order."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.length = 0
        self.reasoning: list[str] = []
        self.reasoning_length = 0
        self.reasoning_began: float | None = None  # loop time of its first piece
        self.reasoning_ended: float | None = None  # …and of the answer's first piece
        self.parts: list[dict[str, Any]] = []
        self.images: list[dict[str, Any]] = []
        self.ledger: dict[str, Any] = {}

    @property
    def text(self) -> str:
        """The reply's text so far."""
        return "".join(self.pieces)

    def token(self, text: str) -> TokenEvent:
        """Append `text` to the reply and return its token event."""
        event: TokenEvent = {"type": "token", "index": self.length, "text": text}
        if self.reasoning_began is not None and self.reasoning_ended is None:
            self.reasoning_ended = asyncio.get_running_loop().time()
        self.pieces.append(text)
        self.length += len(text)
        return event

    def reason(self, text: str) -> ReasoningEvent:
        """Append `text` to the model's reasoning and return its event."""
        now = asyncio.get_running_loop().time()
        if self.reasoning_began is None:
            self.reasoning_began = now
        elif self.reasoning_ended is not None and self.reasoning:
            # Thinking again after a tool's answer: a new paragraph of the same reasoning.
            self.reasoning_ended, text = None, "\n\n" + text
        event: ReasoningEvent = {"type": "reasoning", "index": self.reasoning_length, "text": text}
        self.reasoning.append(text)
        self.reasoning_length += len(text)
        return event

    def reasoning_part(self) -> dict[str, Any] | None:
        """Return the model's reasoning as the reply's `thinking` part (None if it had none)."""
        if not self.reasoning or self.reasoning_began is None:
            return None
        ended = self.reasoning_ended or asyncio.get_running_loop().time()
        return {
            "type": "thinking",
            "step": "reasoning",
            "content": "".join(self.reasoning),
            "seconds": max(1, round(ended - self.reasoning_began)),
        }

    def progress(self, record: dict[str, Any]) -> list[AgentEvent]:
        """Turn a node's progress record into events and message parts."""
        kind = record.get("kind")
        if kind == "token":
            return [self.token(record["text"])] if record["text"] else []
        if kind == "reasoning":
            return [self.reason(record["text"])] if record["text"] else []
        if kind == "ledger":
            self.ledger = record["ledger"]
        elif kind == "thinking":
            event: ThinkingEvent = {
                "type": "thinking",
                "step": record["step"],
                "code": record["code"],
                "params": record["params"],
                "content": record["content"],
            }
            if record["step"] not in ("tool_call", "tool_result"):  # stored as tool parts
                part = {"type": "thinking", **{k: record[k] for k in STEP_FIELDS}}
                last = self.parts[-1] if self.parts else {}
                if record["code"] in COUNTING_STEPS and last.get("code") == record["code"]:
                    self.parts[-1] = part  # 10 s, 20 s, 30 s…: the latest is the one kept
                else:
                    self.parts.append(part)
            return [event]
        elif kind in ("tool_call", "tool_result"):
            skip = ("kind", "step")  # the part's type says it
            self.parts.append({"type": kind, **{k: v for k, v in record.items() if k not in skip}})
        elif kind == "images":
            self.images = (self.images + list(record["items"]))[:MAX_IMAGES]
        elif kind == "sources":
            self.parts.append({"type": "references", "items": record["items"]})
            sources: SourcesEvent = {"type": "sources", "items": record["items"]}
            return [sources]
        return []
