"""Chunks leave at once when nothing is on its way, and merge while a send is in flight."""

from __future__ import annotations

from typing import Any

from conversations import events
from conversations.realtime.coalescer import Coalescer


class Wire:
    """A stand-in for the hub: records posts; a test decides when each send finishes."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.pending: list[Any] = []

    def post(self, frame: Any, append: Any, on_sent: Any) -> None:
        self.frames.append(frame)
        if on_sent is not None:
            self.pending.append(on_sent)

    def finish_sends(self) -> None:
        while self.pending:
            self.pending.pop(0)()

    def text(self) -> str:
        tokens = [f for f in self.frames if f["type"] == "token"]
        offset = 0
        for frame in tokens:
            assert frame["index"] == offset  # contiguous: nothing lost or repeated
            offset += len(frame["text"])
        return "".join(f["text"] for f in tokens)


def coalescer(wire: Wire) -> Coalescer:
    return Coalescer(run_id="r", reply_to="m", post=wire.post, token=events.token)


def test_each_token_leaves_at_once_when_the_previous_send_is_done():
    wire = Wire()
    chunks = coalescer(wire)
    for word in ["one ", "two ", "three "]:
        chunks.add_token(word)
        wire.finish_sends()
    assert [f["text"] for f in wire.frames] == ["one ", "two ", "three "]


def test_tokens_arriving_during_a_send_leave_together_when_it_is_done():
    wire = Wire()
    chunks = coalescer(wire)
    chunks.add_token("a")  # out at once
    for letter in "bcde":
        chunks.add_token(letter)  # "a" is still on its way
    assert [f["text"] for f in wire.frames] == ["a"]
    wire.pending.pop(0)()  # "a" is sent: what waited leaves as one chunk
    assert [f["text"] for f in wire.frames] == ["a", "bcde"]
    wire.finish_sends()
    chunks.add_token("f")
    assert wire.text() == "abcdef"


def test_other_frames_keep_their_place_after_the_text_before_them():
    wire = Wire()
    chunks = coalescer(wire)
    chunks.add_token("x")
    chunks.add_token("y")  # waiting behind "x"
    chunks.post(events.sources(run_id="r", items=[]))
    assert [f["type"] for f in wire.frames] == ["token", "token", "sources"]
    assert wire.text() == "xy"


def test_the_final_flush_sends_what_is_still_waiting():
    wire = Wire()
    chunks = coalescer(wire)
    chunks.add_token("start ")
    chunks.add_token("end")
    chunks.flush()
    assert wire.text() == "start end" == chunks.text
    assert chunks.text_bytes == len(b"start end")
