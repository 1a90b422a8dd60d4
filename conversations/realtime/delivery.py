"""Handing a conversation's frames to this process's sockets, each where it stands.

The hub (realtime/hub.py) mixes this in. Frames of a conversation leave one at a time,
in the order they were posted (its queue), and each reply's text reaches each socket
exactly (realtime/positions.py):
- a `token` frame is cut per socket: repeats dropped, gaps filled from the run's whole
  text (the run itself when it runs here, its progress record in Redis otherwise);
- a `sync.state` is answered in that same order, so the snapshot and the chunks after it
  meet; its reply text sets the socket's position (a long one follows as chunks);
- before the stored reply is announced (`message.created` / `generation.finished`), a
  socket is sent whatever of its text it still lacks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from . import progress
from .frames import REASONING_SYNC_CHARS, TOKEN_FRAME_CHARS, TokenFrame, dumps
from .positions import Positions, cut, pieces

logger = logging.getLogger(__name__)

GAP_WAIT_STEPS = 10  # × 50 ms: for another process to write a reply's text again
RECENT_RUNS = 4  # finished runs remembered per conversation (see _send_sync)

# events.token, the one builder of `token` frames, handed over by the events module when
# it loads (it imports the hub, so the hub cannot import it).
_token: Callable[..., TokenFrame] | None = None


def build_tokens_with(builder: Callable[..., TokenFrame]) -> None:
    """Use `builder` (events.token) for the `token` frames the hub cuts."""
    global _token
    _token = builder


class Delivery:
    """The delivery half of the Hub: it uses the hub's sockets, runs and `_mark_missed`."""

    sockets: dict[str, set[Any]]
    runs: dict[str, Any]
    run: Callable[[Any, Any], Any]

    def _init_delivery(self) -> None:
        self.positions = Positions()
        # conversation → the runs between their generation.started and .finished in the
        # queue (one, or a side-by-side pair) → what their generation.started said
        self._active: dict[str, dict[str, dict[str, Any]]] = {}
        # conversation → run → its stored message, for runs that ended in the queue
        self._finished: dict[str, dict[str, dict[str, Any]]] = {}

    _mark_missed: Any  # Continuity's

    def _forget_conversation(self, key: str) -> None:
        self._active.pop(key, None)
        self._finished.pop(key, None)

    async def _hand_out(self, key: str, frame: dict[str, Any], targets: list[Any]) -> None:
        """Send one frame of the conversation to `targets` (its sockets here, or one)."""
        kind = frame["type"]
        if kind == "token":
            await self._send_token(key, frame, targets)
        elif kind == "sync.state":
            for sock in targets:
                await self._send_sync(key, frame, sock)
        else:
            if kind == "generation.started":
                started = {k: frame[k] for k in ("reply_to", "model") if k in frame}
                self._active.setdefault(key, {})[frame["run_id"]] = started
                for sock in targets:
                    self.positions.set(sock, frame["run_id"], frame.get("text_offset", 0))
            elif kind in ("message.created", "generation.finished"):
                await self._complete(key, frame, targets)
            text = dumps(frame)
            for sock in targets:
                await self._to_socket(sock, text, kind)
            if kind == "generation.finished":
                self._end_run(key, frame, targets)

    async def _send_token(self, key: str, frame: dict[str, Any], targets: list[Any]) -> None:
        run_id, index, text = frame["run_id"], frame["index"], frame["text"]
        whole: str | None = None  # the run's text, read once if a socket lacks some
        plain: str | None = None  # the frame as it came, serialized once
        for sock in targets:
            action, start, piece = cut(self.positions.get(sock, run_id), index, text)
            if action == "skip":
                continue
            if action == "gap":
                whole = whole if whole is not None else await self._run_text(key, run_id, index)
                if whole is None:  # held back; a sync.state follows (check_layer)
                    logger.warning("reply %s: text lost on the way; holding for a sync", run_id)
                    self._mark_missed([key])
                    continue
                await self._send_text(sock, run_id, start, whole[start:index] + text)
            elif start == index and len(text) <= TOKEN_FRAME_CHARS:
                plain = plain if plain is not None else dumps(frame)
                await self._to_socket(sock, plain, "token")
            else:
                await self._send_text(sock, run_id, start, piece)
            self.positions.set(sock, run_id, index + len(text))

    async def _send_sync(self, key: str, frame: dict[str, Any], sock: Any) -> None:
        """Send a `sync.state` as of its place in the queue, and set the socket's positions
        in the replies in progress (one, or a side-by-side pair)."""
        messages = frame["messages"]
        ended = self._finished.get(key, {})
        generations: list[dict[str, Any]] = []
        for generation in frame["generations"]:
            stored = ended.get(generation["run_id"])
            if stored is None:
                generations.append(generation)
            elif not frame["has_more"] and all(m["id"] != stored["id"] for m in messages):
                # The run ended in the queue after the snapshot was read: it is a message
                # now. (With more pages to come it is among them: the client asks after
                # this one.)
                messages = [*messages, stored]
        listed = {g["run_id"] for g in generations} | {m["id"] for m in messages}
        for active, started in list(self._active.get(key, {}).items()):
            if active in listed:
                continue
            # A run started in the queue after the snapshot was read (and is not stored).
            text = await self._run_text(key, active)
            if text is None:  # its end never came through (frames lost in an outage)
                self._forget_active(key, active)
            else:
                generations.append({"run_id": active, "text": text, **started})
        shown: list[dict[str, Any]] = []
        texts: list[str] = []
        for generation in generations:
            run_id, text = generation["run_id"], generation["text"]
            held = self.positions.get(sock, run_id)
            if held is not None and held > len(text):
                # The snapshot was read before chunks this socket has been sent since
                # (another process's, arriving while it was built: the unasked one after a
                # Redis restart): never move a socket back, or its text is sent twice.
                text = await self._run_text(key, run_id, held) or text
            # Its beginning, within a frame's size: a client shows what comes after as it
            # arrives, and the stored reply holds the whole.
            head = {k: generation[k] for k in ("reply_to", "model") if k in generation}
            head.update(run_id=run_id, text=text[:TOKEN_FRAME_CHARS])
            head["reasoning"] = generation.get("reasoning", "")[:REASONING_SYNC_CHARS]
            shown.append(head)
            texts.append(text)
        state = {
            **frame,
            "messages": messages,
            "generation": shown[0] if shown else None,
            "generations": shown,
        }
        await self._to_socket(sock, dumps(state), "sync.state")
        for head, text in zip(shown, texts, strict=True):
            sent = len(head["text"])
            if len(text) > sent:
                await self._send_text(sock, head["run_id"], sent, text[sent:])
            self.positions.set(sock, head["run_id"], len(text))

    async def _complete(self, key: str, frame: dict[str, Any], targets: list[Any]) -> None:
        """Send each socket what it lacks of a reply before the reply is announced."""
        message = frame["message"]
        run_id = message["id"]
        if message["role"] != "assistant":
            return
        lacking = [
            (sock, held)
            for sock in targets
            if (held := self.positions.get(sock, run_id)) is not None
        ]
        if not lacking:
            return
        text = message["content"]
        if message.get("truncated"):
            text = await self._run_text(key, run_id) or text
        for sock, held in lacking:
            if held < len(text):
                await self._send_text(sock, run_id, held, text[held:])
                self.positions.set(sock, run_id, len(text))

    def _end_run(self, key: str, frame: dict[str, Any], targets: list[Any]) -> None:
        run_id = frame["run_id"]
        self.positions.end_run(targets, run_id)
        self._forget_active(key, run_id)
        ended = self._finished.setdefault(key, {})
        ended[run_id] = frame["message"]
        while len(ended) > RECENT_RUNS:
            del ended[next(iter(ended))]

    def _forget_active(self, key: str, run_id: str) -> None:
        active = self._active.get(key, {})
        active.pop(run_id, None)
        if not active:
            self._active.pop(key, None)

    async def _send_text(self, sock: Any, run_id: str, index: int, text: str) -> None:
        for start, piece in pieces(index, text):
            assert _token is not None, "conversations.events is not loaded"
            frame = _token(run_id=run_id, index=start, text=piece)
            await self._to_socket(sock, dumps(frame), "token")

    async def _to_socket(self, sock: Any, text: str, kind: str) -> None:
        try:
            await sock.deliver(text, kind)
        except Exception:
            logger.exception("could not deliver to a socket")

    async def _run_text(self, key: str, run_id: str, upto: int = 0) -> str | None:
        """Return a run's whole text so far (at least `upto` characters), or None."""
        handle = self.run(key, run_id)
        if handle is not None:
            return handle.text()
        for step in range(GAP_WAIT_STEPS):
            current = await progress.aget_run(conversation_id=key, run_id=run_id)
            if current is not None and len(current["text"]) >= upto:
                return current["text"]
            if step + 1 < GAP_WAIT_STEPS:
                await asyncio.sleep(0.05)
        return None
