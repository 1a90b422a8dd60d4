"""Run one agent turn as a stream of events (agent/events.py), stoppable at any point.

    turn = Turn(AgentContext(config=..., llm=..., reply_id=...), thread=ThreadRef(...),
                question=Question(message_id=..., text=...), checkpointer=...)
    async for event in turn.events():   # thinking, token, sources ... then one finished
        ...
    # or turn.events(on_token=callback): reply text goes to the callback the moment the
    # model sends it, and the iterator yields everything else
    await turn.stop()                    # from anywhere: the stream ends with finished
                                         # (finish_reason "stopped", the partial text)

Stopping: `await turn.stop()` cancels the graph; `events()` still yields the text that
had arrived and then exactly one `finished` event. If instead the task iterating
`events()` is cancelled (or stops iterating), the partial reply is stored all the same,
`turn.finished` holds the final payload, and the CancelledError propagates.
In every ending the partial reply is written into the thread (id = reply_id), so the
agent remembers what the user saw. LLM failures end with finish_reason "error".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from agent.checkpoint import is_checkpoint_error
from agent.completion_events import ModelStreamError
from agent.events import (
    AgentEvent,
    FinishedEvent,
    FinishReason,
    ThinkingEvent,
    TokenEvent,
)
from agent.graph import get_graph, recursion_limit, thread_config
from agent.incoming import clean
from agent.llm import model_label
from agent.model_errors import FAILURE_STEPS, failure_code
from agent.progress import collecting
from agent.reply_record import ReplyRecord
from agent.state import (
    AgentContext,
    Question,
    Usage,
    zero_usage,
)
from agent.steps import describe, step
from agent.threads import ThreadRef, prune_thread, record_exchange, run_from, turn_input
from agent.tokens import estimate_tokens, message_text

logger = logging.getLogger(__name__)

# Node results arrive on "updates"; reply text and progress records through the sink
# installed in `_pump` (agent/progress.py), in the order the nodes emitted them.
# "checkpoints" tells the id of each saved step: the reply's branch point.
STREAM_MODES = ["updates", "checkpoints"]
FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "end_turn",
    "end_turn": "end_turn",
    "tool_calls": "end_turn",
    "function_call": "end_turn",
    "content_filter": "end_turn",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
}
_DONE = object()
TokenCallback = Callable[[TokenEvent], None]


def map_finish_reason(reason: str | None) -> FinishReason:
    """Translate the server's finish reason into ours."""
    return FINISH_REASONS.get(reason or "stop", "end_turn")


class Turn:
    """One user message → one streamed, checkpointed reply."""

    def __init__(
        self,
        context: AgentContext,
        *,
        thread: ThreadRef,
        question: Question,
        checkpointer: BaseCheckpointSaver | None,
    ) -> None:
        """Answer `question` on `thread` with what `context` holds (the model, the user's
        instructions, documents and memories; `context.continues`: a cut-off reply to go
        on from, `question` then being the message it answers)."""
        self.context = context
        self.config = context.config
        self.start = thread.start
        self.continues = context.continues
        self.prefix = context.continues[1] if context.continues else ""
        self.checkpoint_id = ""
        self.thread_id = thread.id
        self.user_message_id = question.message_id
        self.user_text = question.text
        self.reply_id = context.reply_id
        self.finished: FinishedEvent | None = None
        self._graph = get_graph(checkpointer)
        self._record = ReplyRecord()
        self._usage: Usage = zero_usage()
        self._internal: Usage = zero_usage()
        self._final: AIMessage | None = None
        self._error: BaseException | None = None
        self._stop_requested = False
        self._discarded = False
        self._task: asyncio.Task[None] | None = None

    @property
    def error(self) -> BaseException | None:
        """Return what ended the turn in an error (None otherwise)."""
        return self._error

    @property
    def text(self) -> str:
        """Return the reply text streamed so far (after the continued reply's, if any)."""
        return self._record.text

    async def stop(self) -> None:
        """Stop generating; `events()` then ends with a "stopped" finished event."""
        self._stop_requested = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def discard(self) -> None:
        """Keep nothing of this turn in the thread when it ends (its conversation is gone)."""
        self._discarded = True

    async def events(self, on_token: TokenCallback | None = None) -> AsyncIterator[AgentEvent]:
        """Yield this turn's events; the last one is always `finished`.

        With `on_token`, reply text is handed to it the moment the model sends it (on the
        graph's task, when no earlier event is still waiting to be yielded) instead of
        being yielded: one task switch less per token. The order of events is kept.
        """
        if self._task is not None:
            raise RuntimeError("a Turn streams its events once")
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task = asyncio.create_task(self._pump(queue, on_token))
        completed = False
        try:
            while (item := await queue.get()) is not _DONE:
                for event in self._translate(item):
                    yield event
            completed = True
        finally:
            if not completed:  # our consumer was cancelled or walked away
                await self._halt()
                self.finished = await self._conclude("stopped")
        reason = self._ending()
        if reason == "end_turn" and not self._record.text and self._final is not None:
            yield self._record.token(message_text(self._final)[len(self.prefix) :])
        if reason == "error":
            yield self._fault()
        self.finished = await self._conclude(reason)
        yield self.finished

    async def _pump(self, queue: asyncio.Queue[Any], on_token: TokenCallback | None) -> None:
        """Run the graph, forwarding every stream part to `queue`."""
        context = self.context
        run_config = thread_config(
            self.thread_id,
            checkpoint_id=run_from(self.start),
            recursion_limit=recursion_limit(self.config.max_iterations),
        )
        message = HumanMessage(id=self.user_message_id, content=self.user_text)

        def record(data: dict[str, Any]) -> None:
            if on_token is not None and data.get("kind") == "token" and queue.empty():
                if data["text"]:
                    on_token(self._record.token(data["text"]))
                return
            queue.put_nowait({"type": "custom", "data": data})

        try:
            with collecting(record):
                async for part in self._graph.astream(
                    turn_input(self.start, [message]),
                    run_config,
                    context=context,
                    stream_mode=STREAM_MODES,
                    version="v2",
                    # Each step's checkpoint is saved while the next step runs (not before
                    # it starts); the run's exit, a stop included, waits for every save.
                    durability="exit" if self._graph.checkpointer else None,
                ):
                    queue.put_nowait(part)
        except Exception as exc:  # reported as finish_reason "error", never raised
            self._error = exc
        finally:
            queue.put_nowait(_DONE)

    async def _halt(self) -> None:
        """Cancel the graph run and wait until it has unwound."""
        self._stop_requested = True
        if self._task is not None:
            if not self._task.done():
                self._task.cancel()
            await asyncio.wait({self._task})

    def _ending(self) -> FinishReason:
        """Return how the turn ended once the stream is drained."""
        if self._error is not None:
            return "error"
        if self._final is not None:
            return map_finish_reason(self._final.response_metadata.get("finish_reason"))
        return "stopped" if self._stop_requested else "error"

    def _fault(self) -> ThinkingEvent:
        """Say, as a step of the reply, why it failed, in words for people (MODEL_FAULTS)."""
        error = self._error
        if isinstance(error, ModelStreamError):
            fields = step(error.code, **error.params)
        elif is_checkpoint_error(error):  # the thread's checkpoints, not the model
            fields = step("memory.unreachable")
        else:  # the server refused, could not be reached, or the graph failed
            fields = step(FAILURE_STEPS[failure_code(error)])
        self._record.parts.append({"type": "thinking", **fields})
        return {"type": "thinking", **fields}  # type: ignore[typeddict-item]

    def _translate(self, part: dict[str, Any]) -> list[AgentEvent]:
        """Turn one LangGraph stream part into zero or more agent events."""
        if part["type"] == "updates":
            self._absorb(part["data"])
            return []
        if part["type"] == "checkpoints":
            self.checkpoint_id = str(part["data"]["config"]["configurable"]["checkpoint_id"])
            return []
        if part["type"] == "custom" and isinstance(part["data"], dict):
            return self._record.progress(part["data"])
        return []

    def _absorb(self, updates: dict[str, Any]) -> None:
        """Keep what the runner needs from node updates (final answer, usage)."""
        for node, update in updates.items():
            if not isinstance(update, dict):
                continue
            if "internal_usage" in update:
                self._internal = update["internal_usage"]
            if node != "agent":
                continue
            self._usage = update.get("usage", self._usage)
            for message in update.get("messages", []):
                if isinstance(message, AIMessage) and message.id == self.reply_id:
                    self._final = message

    async def _conclude(self, reason: FinishReason) -> FinishedEvent:
        """Store a partial reply if needed and build the one finished event."""
        content = self.text
        if reason in ("stopped", "error") and not self._discarded:
            await asyncio.shield(self._store_partial(self.prefix + content, reason))
        elif not self._discarded:
            await asyncio.shield(self._prune())
        usage = {
            "input_tokens": self._usage["input_tokens"],
            "output_tokens": self._usage["output_tokens"],
        }
        # A stopped or failed call reports no usage, and some servers (llama.cpp's) never do:
        # the counts are then estimates, and the ledger says so.
        estimated = reason in ("stopped", "error") or not self._usage["output_tokens"]
        if estimated:
            usage["input_tokens"] = usage["input_tokens"] or int(
                self._record.ledger.get("estimated_input_tokens", 0)
            )
            usage["output_tokens"] = max(usage["output_tokens"], estimate_tokens(content))
        context = {
            "summaries": [],
            "message_ids": [],
            "estimated_input_tokens": 0,
            "actual_input_tokens": None,
            "window": self.config.context_window,
            **self._record.ledger,
            "main_calls": self._usage["calls"],
            "internal_usage": dict(self._internal),
            "usage_estimated": estimated,
        }
        reasoning = self._record.reasoning_part()
        return {
            "type": "finished",
            "message_id": self.reply_id,
            "content": content,
            "parts": [reasoning, *self._record.parts] if reasoning else list(self._record.parts),
            "model": model_label(self.config),
            "finish_reason": reason,
            "usage": usage,  # type: ignore[typeddict-item]
            "context": context,
            "error": _describe(self._error, self.reply_id) if reason == "error" else None,
            "checkpoint_id": self.checkpoint_id,
            "images": list(self._record.images),
        }

    async def _store_partial(self, content: str, reason: FinishReason) -> None:
        """Write the question and the text the user saw into the thread as the reply, on
        the branch the turn ran on (the steps it saved before stopping are left aside)."""
        if self._graph.checkpointer is None:
            return
        try:
            self.checkpoint_id = await record_exchange(
                self._graph.checkpointer,
                self.thread_id,
                user_message_id=self.user_message_id,
                user_text=self.user_text,
                reply_id=self.reply_id,
                reply_text=content,
                finish_reason=reason,
                start=self.start,
                replaces=self.continues[0] if self.continues else None,
            )
        except Exception:  # the reply is still returned to the caller
            logger.exception("could not store the partial reply of %s", self.reply_id)
            self._record.parts.append({"type": "thinking", **step("generate.partial_not_kept")})

    async def _prune(self) -> None:
        """Keep only the checkpoint this turn saved (a thread's cost stays flat)."""
        if self._graph.checkpointer is not None:
            await prune_thread(self._graph.checkpointer, self.thread_id)


def _describe(error: BaseException | None, reply_id: str) -> dict[str, str]:
    """Return what a failed reply's `metadata.error` says: a code (SPEC "Failures named")
    and the step's words; the server's own words (and the root cause: client libraries wrap
    a refused connection in a generic "timed out") go to the log, never to people."""
    if error is not None and is_checkpoint_error(error):
        code, words = "memory_unavailable", describe("memory.unreachable", {})
    else:
        code = failure_code(error)
        if isinstance(error, ModelStreamError):
            words = describe(error.code, error.params)
        else:
            words = describe(FAILURE_STEPS[code], {})
    if error is not None:
        text = f"{type(error).__name__}: {str(error).strip() or type(error).__name__}"
        root = error
        while root.__cause__ is not None:
            root = root.__cause__
        if root is not error and str(root).strip():
            text += f" ({type(root).__name__}: {str(root).strip()})"
        logger.warning("reply %s failed (%s): %s", reply_id, code, clean(text)[:2000])
    return {"code": code, "message": words}
