"""Helpers for the agent tests: run a turn, recognise summarizer requests."""

from __future__ import annotations

import uuid
from typing import Any

from agent import prompts
from agent.config import AgentConfig
from agent.llm import get_chat_model
from agent.offline_answers import summary_reply
from agent.runner import Turn
from agent.state import AgentContext, Question
from agent.threads import ThreadRef
from tests.support.openai_replies import Reply, default_responder, message_texts


def is_summarizer_request(body: dict[str, Any]) -> bool:
    """Say whether a request comes from the agent's summarizer."""
    systems = message_texts(body, "system")
    return bool(systems) and systems[0].startswith(prompts.SUMMARIZER_MARKER)


def memory_responder(body: dict[str, Any]) -> Reply:
    """Summarize like a fact-keeping summarizer; echo everything else."""
    if is_summarizer_request(body):
        system = message_texts(body, "system")[0]
        return Reply(text=summary_reply(system, message_texts(body, "user")[-1]))
    return default_responder(body)


def new_id() -> str:
    return str(uuid.uuid4())


class TurnResult:
    """The events of one finished turn."""

    def __init__(self, turn: Turn, events: list[dict[str, Any]]) -> None:
        self.turn = turn
        self.events = events
        self.finished = events[-1]

    @property
    def text(self) -> str:
        return "".join(e["text"] for e in self.events if e["type"] == "token")

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    def thinking(self, step: str) -> list[str]:
        return [e["content"] for e in self.steps(step)]

    def steps(self, step: str) -> list[dict[str, Any]]:
        """Return the thinking events of one kind of step ({step, code, params, content})."""
        return [e for e in self.events if e["type"] == "thinking" and e["step"] == step]

    def codes(self, step: str) -> list[str]:
        return [e["code"] for e in self.steps(step)]


def make_turn(
    config: AgentConfig, checkpointer: Any, thread_id: str, text: str, **options: Any
) -> Turn:
    """Build a turn as the app does: `options` are the context's fields (the chat model
    by default), `start`, `user_message_id` and `reply_id`."""
    context = AgentContext(
        config=config,
        llm=options.pop("llm", None) or get_chat_model(config),
        reply_id=options.pop("reply_id", new_id()),
        **{k: v for k, v in options.items() if k not in ("start", "user_message_id")},
    )
    return Turn(
        context,
        thread=ThreadRef(thread_id, options.get("start")),
        question=Question(options.get("user_message_id") or new_id(), text),
        checkpointer=checkpointer,
    )


async def run_one(
    config: AgentConfig, checkpointer: Any, thread_id: str, text: str, **options: Any
) -> TurnResult:
    """Run one turn to completion and return its events."""
    turn = make_turn(config, checkpointer, thread_id, text, **options)
    events = [event async for event in turn.events()]
    return TurnResult(turn, events)
