"""A stand-in for the agent's turn (agent.runner.Turn) with the same contract.

`events()` yields thinking, token… and ends with one `finished` event (with `on_token`,
tokens go to that callback instead of being yielded); if the task
iterating it is cancelled, `finished` holds the partial reply ("stopped") and the
CancelledError propagates, as with the real runner.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from agent.steps import step


@dataclass
class FakeTurn:
    reply_id: str
    tokens: list[str]
    delay: float = 0.005
    fail: bool = False
    gate: asyncio.Event | None = None
    gate_after: int = 5
    finished: dict[str, Any] | None = None
    discarded: bool = False
    text: str = ""
    error: BaseException | None = None  # Turn.error: a failed fake turn is the model's fault

    def discard(self) -> None:
        self.discarded = True

    def _finished(self, reason: str, usage: dict[str, int]) -> dict[str, Any]:
        return {
            "type": "finished",
            "message_id": self.reply_id,
            "content": self.text,
            "parts": [],
            "model": "fake",
            "finish_reason": reason,
            "usage": usage,
            "context": {"message_ids": []},
            "error": "ConnectionError: model server down" if reason == "error" else None,
            "checkpoint_id": "",
        }

    async def events(self, on_token=None):
        try:
            yield {"type": "thinking", **step("generate.answer", round=1)}
            for n, token in enumerate(self.tokens):
                if self.gate is not None and n == self.gate_after:
                    await self.gate.wait()
                event = {"type": "token", "index": len(self.text), "text": token}
                self.text += token
                if on_token is not None:
                    on_token(event)  # as the real Turn: text goes to the callback
                else:
                    yield event
                await asyncio.sleep(self.delay)
        except (asyncio.CancelledError, GeneratorExit):
            self.finished = self._finished("stopped", {"input_tokens": 7, "output_tokens": 0})
            raise
        reason = "error" if self.fail else "end_turn"
        self.finished = self._finished(
            reason, {"input_tokens": 7, "output_tokens": len(self.tokens)}
        )
        yield self.finished


@dataclass
class FakeAgent:
    """Stands in for conversations.replies.turns.astart_turn; records what it was asked."""

    tokens: list[str] = field(default_factory=lambda: [f"word{i} " for i in range(20)])
    delay: float = 0.005
    fail: bool = False
    gate: asyncio.Event | None = None
    gate_after: int = 5
    calls: list[str] = field(default_factory=list)
    turns: list[FakeTurn] = field(default_factory=list)
    reply: Any = None  # optional: user text → the reply's tokens

    async def __call__(
        self,
        *,
        conversation: Any,
        user_message: Any,
        reply_id: Any,
        resume_after: Any = None,
        continues: Any = None,
        model: str | None = None,
        side_thread: bool = False,
    ) -> FakeTurn:
        self.calls.append(user_message.content)
        tokens = self.reply(user_message.content) if self.reply else self.tokens
        turn = FakeTurn(
            reply_id=str(reply_id),
            tokens=list(tokens),
            delay=self.delay,
            fail=self.fail,
            gate=self.gate,
            gate_after=self.gate_after,
        )
        self.turns.append(turn)
        return turn
