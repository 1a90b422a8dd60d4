"""One reply run in this process, from its claim to its follow-ups (`ReplyRunner`).

`orchestrator.start_reply` claims the conversation's slot and hands the claim here: the
run streams the agent's turn to every socket, stores the reply and frees the slot in one
transaction however it ends, announces it once, then starts the follow-ups (a title, the
summary). A run whose conversation is deleted is cancelled and stores nothing.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from django.utils.translation import gettext as _

from agent.events import AgentEvent, FinishedEvent
from agent.runner import Turn
from agent.steps import thinking_step
from core import heap, rls
from core.db_async import db_async
from core.errors import NotFound
from core.outages import is_database_error

from .. import events
from ..models import Message, ReplyRun
from ..realtime import progress
from ..realtime.coalescer import Coalescer
from ..realtime.frames import ErrorFrame
from ..realtime.hub import Hub, RunHandle
from . import store, summaries, threads, titles, turns
from .recovery import announce_reply

logger = logging.getLogger(__name__)

CancelWhy = Literal["stop", "deleted", "shutdown"]
ErrorCallback = Callable[[ErrorFrame], Awaitable[None]]

_afinish_run = db_async(store.finish_run)


class ReplyRunner:
    """One reply run in this process, from its claim to its follow-ups."""

    def __init__(
        self,
        hub: Hub,
        claimed: store.Claim,
        on_error: ErrorCallback | None,
        *,
        model: str | None = None,
        run: ReplyRun | None = None,
        follows: ReplyRunner | None = None,
    ) -> None:
        run = run or claimed.run
        assert run is not None
        self.model = model or None
        self.lane = run.lane  # 1: the second model of a side-by-side pair
        self.hub = hub
        self.conversation = claimed.conversation
        self.question = claimed.user_message
        self.claimed = claimed
        self.run_id: uuid.UUID = run.pk
        self.key = str(self.conversation.pk)
        self.on_error = on_error
        self.done: asyncio.Future[Message | None] = hub.loop.create_future()
        # Resolved once this run's generation.started is out (or it ended without one): a
        # side-by-side pair's second model is announced after the first, so every socket
        # sees the pair in its lanes' order.
        self.announced: asyncio.Future[None] = hub.loop.create_future()
        self.follows = follows
        self.coalescer = Coalescer(
            run_id=str(self.run_id),
            reply_to=str(self.question.pk),
            post=self._post,
            token=events.token,
            prefix=claimed.continues.content if claimed.continues is not None else "",
            lane=self.lane,
            model=self.model or "",
        )
        # The model's reasoning: numbered as the text is, paced the same way, never part
        # of the reply's text (SPEC "Model servers as they are").
        self.reasoning = Coalescer(
            run_id=str(self.run_id),
            reply_to=str(self.question.pk),
            post=self._post_reasoning,
            token=events.reasoning,
        )
        self.handle = RunHandle(
            self.key,
            self.run_id,
            self.done,
            self.cancel,
            lambda: self.coalescer.text,
            lambda: self.reasoning.text,
            str(self.question.pk),
            self.model or "",
        )
        self.turn: Turn | None = None
        self.why: CancelWhy | None = None
        self.started = False  # a task cancelled before its first step would skip _finish
        self.finishing = False
        self.deleted = False
        self.task: asyncio.Task[None] | None = None
        self.failure: BaseException | None = None  # what failed the run outside the turn
        self.fault: dict[str, Any] | None = None  # the step saying so, kept on the reply

    def _post(
        self, frame: Any, append: progress.Append | None, on_sent: Callable[[], None] | None
    ) -> None:
        # A run's frames are its conversation's alone (no list page hears them): straight
        # to the hub that runs it, once per chunk.
        self.hub.post(self.key, frame, append=append, on_sent=on_sent)

    def _post_reasoning(
        self, frame: Any, append: progress.Append | None, on_sent: Callable[[], None] | None
    ) -> None:
        self.hub.post(self.key, frame, on_sent=on_sent)
        if append is not None:
            progress.record_reasoning(run_id=self.run_id, text=append.text)

    def begin(self) -> None:
        """Announce the user's message, register the run and start its task (no await:
        from the claim on, a stop or a delete in this process always finds the run)."""
        if self.lane == 0:  # a side-by-side pair announces its question once
            if self.claimed.continues is None and self.question.run_id == self.run_id:
                events.publish(events.message_created(self.question), conversation_id=self.key)
            events.publish(
                events.conversation_updated(self.conversation),
                conversation_id=self.key,
                user_id=self.conversation.created_by_id,
            )
        self.hub.register_run(self.handle)
        self.task = self.hub.loop.create_task(self._run(), name=f"reply-{self.run_id}")
        self.task.add_done_callback(lambda _: self._announce())  # however the task ends

    def cancel(self, why: CancelWhy) -> None:
        """Stop the run (a stop request, its conversation deleted, the process ending).

        A deletion wins over any earlier reason and also reaches a run that is already
        storing its reply: nothing of a deleted conversation's run is kept.
        """
        if why == "deleted":
            self.deleted = True
            if self.turn is not None:
                self.turn.discard()
        if self.finishing or (self.why is not None and why != "deleted"):
            return
        self.why = why
        if self.started and self.task is not None:
            self.task.cancel()

    async def _run(self) -> None:
        """Stream one agent turn and store the reply however it ends, as its user: what
        the run and its follow-ups read and write is the conversation owner's only."""
        with rls.as_user(self.conversation.created_by_id):
            await self._stream()

    async def _stream(self) -> None:
        self.started = True
        finished: FinishedEvent | None = None
        reason: str = Message.FinishReason.ERROR
        try:
            if self.why is not None:  # cancelled before it began
                raise asyncio.CancelledError
            await progress.astart(
                conversation_id=self.key,
                run_id=self.run_id,
                reply_to=self.question.pk,
                text=self.coalescer.text,
                lane=self.lane,
                model=self.model or "",
            )
            await self.hub.watch(self.key)
            if self.follows is not None:
                await asyncio.shield(self.follows.announced)
            self.coalescer.post(
                events.generation_started(
                    run_id=self.run_id,
                    reply_to=self.question.pk,
                    continues=self.claimed.continues,
                    model=self.model,
                )
            )
            self._announce()
            self.turn = await turns.astart_turn(
                conversation=self.conversation,
                user_message=self.question,
                reply_id=self.run_id,
                resume_after=self.claimed.resume_after,
                continues=self.claimed.continues,
                model=self.model,
                side_thread=self.lane > 0,
            )
            if self.deleted:
                self.turn.discard()
            async for event in self.turn.events(on_token=self._relay):
                if event["type"] == "finished":
                    finished = event
                else:
                    self._relay(event)
            reason = finished["finish_reason"] if finished else Message.FinishReason.ERROR
        except asyncio.CancelledError:
            finished = self.turn.finished if self.turn is not None else None
            reason = {
                "stop": Message.FinishReason.STOPPED,
                "deleted": Message.FinishReason.STOPPED,
            }.get(self.why or "", Message.FinishReason.INTERRUPTED)
        except Exception as exc:
            self.failure = exc
            logger.exception("reply %s failed", self.run_id)
            if is_database_error(exc):  # before the turn began: say why on the reply
                self.fault = thinking_step("memory.unreachable")
                self._relay(self.fault)  # type: ignore[arg-type]
        finally:
            self._announce()
            self.finishing = True
            self.reasoning.flush()
            self.coalescer.flush()  # the last chunk leaves before the stored reply is announced
            await self._finish(finished, reason)

    def _announce(self) -> None:
        if not self.announced.done():
            self.announced.set_result(None)

    def _relay(self, event: AgentEvent) -> None:
        if event["type"] == "token":
            self.coalescer.add_token(event["text"])
        elif event["type"] == "reasoning":
            self.reasoning.add_token(event["text"])
        elif event["type"] == "thinking":
            self.coalescer.post(events.thinking(run_id=self.run_id, event=event))
        elif event["type"] == "sources":
            self.coalescer.post(events.sources(run_id=self.run_id, items=event["items"]))

    def _reply(self, finished: FinishedEvent | None, reason: str) -> store.Reply:
        parts = [self.fault] if self.fault else []
        fields: dict[str, Any] = {"parts": parts, "model": "", "tokens_used": None, "metadata": {}}
        if finished is not None:
            fields = turns.reply_fields(finished, continues=self.claimed.continues)
        # What the sockets were sent is what the user saw: that text is the reply.
        fields.update(content=self.coalescer.text, finish_reason=reason)
        return store.Reply(**fields)

    async def _finish(self, finished: FinishedEvent | None, reason: str) -> None:
        result: store.Finished | None = None
        try:
            if not self.deleted:
                result = await asyncio.shield(
                    _afinish_run(
                        conversation_id=self.conversation.pk,
                        run_id=self.run_id,
                        question=self.question,
                        reply=self._reply(finished, reason),
                    )
                )
            if result is not None and result.stored_now:
                announce_reply(result, usage=finished["usage"] if finished else None)
                if self.lane == 0:  # a pair's title and summary: once, after the first
                    self._follow_up(result)
                heap.settle_once()  # the reply path's modules and caches are loaded now
            elif result is None:  # the conversation is gone (deleted before or meanwhile)
                self.deleted = True
                events.publish(None, conversation_id=self.key, clear_run=self.run_id)
                await self._forget()
        except Exception:
            logger.exception("reply %s: could not store the reply", self.run_id)
        finally:
            if self.lane > 0:  # its own thread served its turn: its ledger holds its memory
                await threads.adrop_side_thread(self.key, self.run_id)
            await self.hub.remove_run(self.handle)
            if not self.done.done():
                if self.deleted:
                    self.done.set_exception(NotFound(_("Conversation not found.")))
                    self.done.exception()  # retrieved: nobody may be waiting
                else:
                    self.done.set_result(result.message if result is not None else None)
        stored = result.message if result is not None else None
        if stored is not None and stored.finish_reason == Message.FinishReason.ERROR:
            await self.hub.flushed(self.key)  # after generation.finished, not before it
            await self._notify_error()

    async def _forget(self) -> None:
        """The conversation is gone: drop what the turn may have checkpointed meanwhile."""
        logger.info("reply %s: conversation deleted; run cancelled", self.run_id)
        try:
            await threads.adelete_agent_thread(self.key)
        except Exception:
            logger.warning("reply %s: could not drop the agent thread", self.run_id)

    def _follow_up(self, finished: store.Finished) -> None:
        """Schedule what may run after the reply is out (never delays it)."""
        conversation = finished.conversation
        if titles.wants_model_title(conversation, finished.question, finished.message):
            assert finished.question is not None
            self.hub.start_task(
                titles.awrite_model_title(
                    conversation=conversation, question=finished.question, reply=finished.message
                ),
                name=f"title-{conversation.pk}",
            )
        self.hub.start_task(
            summaries.maybe_auto_summarize(conversation.pk, current=conversation),
            name=f"auto-summary-{conversation.pk}",
        )

    async def _notify_error(self) -> None:
        if self.on_error is None:
            return
        failure = self.failure or (self.turn.error if self.turn is not None else None)
        if is_database_error(failure):  # its checkpoints or rows: not the model's fault
            frame = events.error(
                "unavailable",
                _("The conversation's memory could not be reached; try again in a moment."),
            )
        else:
            frame = events.error("llm_unavailable", "The model did not answer.")
        try:
            await self.on_error(frame)
        except Exception:
            logger.debug("the socket that asked for %s is gone", self.run_id)
