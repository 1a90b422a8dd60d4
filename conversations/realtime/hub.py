"""The process-wide hub: this process's sockets, its running replies, and the fan-out.

A frame posted for a conversation is sent, in posting order, straight to the sockets of
that conversation connected to this process, and published once to the channel layer
tagged with this process's id (realtime/interprocess.py); every other process's hub
forwards it to its own sockets, never back. Stop requests travel the same way to the
process that owns a run. A `conversation.deleted` frame, wherever it was posted, cancels
the conversation's run in the process that owns it. A user's list-page sockets are fed the
same way, one subscription per user and process (realtime/lists.py).

The hub is transport only: it never decides what a frame says (conversations/events.py
builds every frame) nor how a run ends (conversations/replies/ owns the run).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from channels.layers import InMemoryChannelLayer, get_channel_layer

from core import rls
from core.groups import conversation_group
from core.ids import parse_uuid

from . import progress
from .audience import Audience
from .continuity import Continuity
from .delivery import Delivery
from .interprocess import PROCESS_ID, Interprocess
from .lists import Lists

logger = logging.getLogger(__name__)

SHUTDOWN_WAIT_SECONDS = 10.0  # for running replies to store their text when the hub closes


class LocalSocket(Protocol):
    async def deliver(self, text: str, frame_type: str) -> None:
        """Send one serialized frame to the client."""


@dataclass
class RunHandle:
    """A reply running in this process; the orchestrator owns it, the hub only finds it."""

    conversation_id: str
    run_id: uuid.UUID
    done: asyncio.Future[Any]  # resolves with the stored reply
    cancel: Callable[[str], None]  # cancel(why): "stop" | "deleted" | "shutdown"
    text: Callable[[], str] = field(default=lambda: "")  # the reply's text so far
    reasoning: Callable[[], str] = field(default=lambda: "")  # the model's reasoning so far
    reply_to: str = ""  # the message it answers
    model: str = ""  # the model named for it ("": the conversation's)

    def generation(self) -> dict[str, Any]:
        """The reply in progress as `sync.state` lists it."""
        found = {"run_id": str(self.run_id), "text": self.text(), "reasoning": self.reasoning()}
        if self.reply_to:
            found["reply_to"] = self.reply_to
        if self.model:
            found["model"] = self.model
        return found


@dataclass(slots=True)
class _Item:
    frame: dict[str, Any] | None  # None: only the progress work below
    append: progress.Append | None  # text to add to the reply in progress first
    local_only: bool
    clear_run: str | None = None  # forget this run's progress once the frame is out
    on_sent: Callable[[], None] | None = None  # told when the item is done (or failed)
    target: LocalSocket | None = None  # only this socket (a `sync.state` it asked for)


class Hub(Continuity, Delivery, Interprocess, Lists):
    """Sockets and runs of one event loop (one per Daphne process in production)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.layer = get_channel_layer()
        # The in-memory layer reaches no other process: local delivery is all there is.
        self.shared = self.layer is not None and not isinstance(self.layer, InMemoryChannelLayer)
        self.sockets: dict[str, set[LocalSocket]] = {}
        self.listeners: set[Any] = set()  # list-page sockets opened with a token (watchdog)
        self.runs: dict[str, dict[uuid.UUID, RunHandle]] = {}  # conversation → its runs
        self._queues: dict[str, deque[_Item]] = {}
        self._pumps: dict[str, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self.closing = False
        self.audience = Audience(self)
        self._init_interprocess()
        self._init_continuity()
        self._init_delivery()
        self._init_lists()

    # --- sockets and runs ----------------------------------------------------------
    def enter(self, conversation_id: Any, sock: LocalSocket) -> None:
        """Deliver the frames posted in this process for the conversation to `sock` from
        now on (`join` hears the other processes' too)."""
        self.sockets.setdefault(str(conversation_id), set()).add(sock)

    async def join(self, conversation_id: Any, sock: LocalSocket) -> None:
        """Deliver the conversation's frames to `sock` from now on."""
        self.enter(conversation_id, sock)
        await self._subscribe(str(conversation_id))

    async def leave(self, conversation_id: Any, sock: LocalSocket) -> None:
        """Stop delivering to `sock`."""
        key = str(conversation_id)
        members = self.sockets.get(key)
        if members is not None:
            members.discard(sock)
            self.positions.forget(sock)
            if not members:
                del self.sockets[key]
                self._last_seq.pop(key, None)
                self._forget_conversation(key)
        await self._unsubscribe_if_idle(key)

    def all_sockets(self) -> list[Any]:
        """Return every socket connected to this process (list-page ones included)."""
        return [sock for members in self.sockets.values() for sock in members] + [*self.listeners]

    def register_run(self, handle: RunHandle) -> None:
        """Register a run so stop requests and deletions find it (subscribe with `watch`)."""
        self.runs.setdefault(handle.conversation_id, {})[handle.run_id] = handle

    def run(self, conversation_id: Any, run_id: Any) -> RunHandle | None:
        """Return a run of the conversation running here, or None."""
        return self.runs.get(str(conversation_id), {}).get(parse_uuid(str(run_id)))

    def runs_of(self, conversation_id: Any) -> list[RunHandle]:
        """Return the conversation's runs here (one, or a side-by-side pair, by lane)."""
        return list(self.runs.get(str(conversation_id), {}).values())

    def cancel_runs(self, conversation_id: Any, why: str) -> bool:
        """Cancel the conversation's runs here; say whether it had any."""
        handles = self.runs_of(conversation_id)
        for handle in handles:
            handle.cancel(why)
        return bool(handles)

    async def watch(self, conversation_id: Any) -> None:
        """Hear other processes' events (stop, delete) for a conversation."""
        await self._subscribe(str(conversation_id))

    async def remove_run(self, handle: RunHandle) -> None:
        """Forget a finished run."""
        found = self.runs.get(handle.conversation_id, {})
        if found.get(handle.run_id) is handle:
            del found[handle.run_id]
            if not found:
                del self.runs[handle.conversation_id]
        await self._unsubscribe_if_idle(handle.conversation_id)

    async def request_stop(self, conversation_id: Any) -> None:
        """Stop the conversation's runs here, or ask the process that owns them."""
        key = str(conversation_id)
        if self.cancel_runs(key, "stop"):
            return
        if self.shared:
            event = {"type": "chat.stop", "conversation_id": key, "origin": PROCESS_ID}
            try:
                await self.layer.group_send(conversation_group(key), event)
            except Exception:
                logger.warning("could not ask other processes to stop the reply of %s", key)

    def start_task(self, coro: Any, *, name: str) -> asyncio.Task[Any] | None:
        """Run a background task that lives as long as the hub (none once it is closing)."""
        if self.closing:
            coro.close()
            return None
        task = self.loop.create_task(coro, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # --- fan-out ---------------------------------------------------------------------
    def post(
        self,
        conversation_id: Any,
        frame: Any,
        *,
        append: progress.Append | None = None,
        local_only: bool = False,
        clear_run: Any = None,
        on_sent: Callable[[], None] | None = None,
        to: LocalSocket | None = None,
    ) -> None:
        """Queue a frame for the conversation's sockets here and, once, for other processes.

        `append` adds a chunk to the reply in progress as the frame goes out (both done
        before the next item);
        `clear_run` forgets that run's progress after it (queued, so no late append of
        the run can bring it back). A None frame does only that progress work.
        `on_sent` is called when the item has been handled, whatever happened to it.
        `to` sends it to that one socket here only (in order with everything else).
        """
        key = str(conversation_id)
        clear = str(clear_run) if clear_run is not None else None
        item = _Item(frame, append, local_only or to is not None, clear, on_sent, to)
        self._queues.setdefault(key, deque()).append(item)
        if key not in self._pumps:
            self._pumps[key] = self.loop.create_task(
                self._pump(key), context=rls.unscoped_context()
            )

    async def _pump(self, key: str) -> None:
        queue = self._queues[key]
        try:
            while queue:
                item = queue.popleft()
                try:
                    await self._send(key, item)
                finally:
                    if item.on_sent is not None:
                        item.on_sent()
        finally:
            del self._pumps[key]
            if not queue:
                self._queues.pop(key, None)

    async def _send(self, key: str, item: _Item) -> None:
        if item.append is not None:  # on its way to Redis while the frame goes out
            if item.on_sent is not None:  # told once both are done
                item.on_sent = _after_both(item.on_sent)
            progress.record(conversation_id=key, append=item.append, then=item.on_sent)
        if item.frame is not None:
            await self._deliver(key, item)
        if item.clear_run is not None:  # after the run's text, in the same trips
            await progress.aclear(conversation_id=key, run_id=item.clear_run)

    async def _deliver(self, key: str, item: _Item) -> None:
        assert item.frame is not None
        frame = item.frame
        frame_type = frame["type"]
        self._track(key, frame)
        if frame_type == "conversation.deleted":
            self.cancel_runs(key, "deleted")
        members = self.sockets.get(key, set())
        if item.target is not None:
            targets = [item.target] if item.target in members else []
        else:
            targets = list(members)
        await self._hand_out(key, frame, targets)
        if self.shared and not item.local_only:
            if frame_type == "token" and not self.audience.others_listen(key):
                return  # nobody else listens; a socket joining elsewhere reads the progress
            # The sender hears "sent" once the frame is out to the other processes too, so
            # a reply's text waiting meanwhile leaves with its next chunk (fewer frames and
            # Redis trips under load; see realtime/coalescer.py).
            self._publish(conversation_group(key), frame, on_sent=item.on_sent)
            item.on_sent = None

    async def flushed(self, conversation_id: Any) -> None:
        """Wait until every frame posted so far for the conversation has been sent."""
        pump = self._pumps.get(str(conversation_id))
        while pump is not None:
            await asyncio.shield(pump)
            pump = self._pumps.get(str(conversation_id))

    async def aclose(self) -> None:
        """Stop runs, background tasks and the layer receiver (tests, shutdown).

        Running replies are stored (as `interrupted`) and announced before the frames
        still queued for other processes are published, within SHUTDOWN_WAIT_SECONDS.
        """
        self.closing = True
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        running = [handle for runs in self.runs.values() for handle in runs.values()]
        for handle in running:
            handle.cancel("shutdown")
        if running:  # each run resolves `done` once its reply is stored
            await asyncio.wait([h.done for h in running], timeout=SHUTDOWN_WAIT_SECONDS)
        pumps = list(self._pumps.values())
        if pumps:  # the announcements still queued per conversation
            await asyncio.wait(pumps, timeout=SHUTDOWN_WAIT_SECONDS)
        await self._close_interprocess(SHUTDOWN_WAIT_SECONDS)


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = weakref.WeakKeyDictionary()
_current: Hub | None = None


def _after_both(on_sent: Callable[[], None]) -> Callable[[], None]:
    """Return what calls `on_sent` the second time it is called: once a chunk is out to
    the sockets (and other processes) and in Redis, the run's next chunk may leave
    (realtime/coalescer.py)."""
    left = 2

    def call() -> None:
        nonlocal left
        left -= 1
        if not left:
            on_sent()

    return call


def get_hub() -> Hub:
    """Return the running loop's hub, creating it on first use."""
    global _current
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        hub = _hubs[loop] = Hub(loop)
    _current = hub
    return hub


def current_hub() -> Hub | None:
    """Return the hub of the server loop, from any thread, if one is running."""
    hub = _current
    if hub is None or hub.loop.is_closed() or not hub.loop.is_running():
        return None
    return hub


async def aclose_hub() -> None:
    """Close the running loop's hub (tests)."""
    global _current
    hub = _hubs.pop(asyncio.get_running_loop(), None)
    if hub is not None:
        await hub.aclose()
        if _current is hub:
            _current = None
