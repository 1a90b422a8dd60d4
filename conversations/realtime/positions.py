"""Where each socket stands in each reply's text, so what it is sent meets exactly.

A socket's position in a run is how much of the run's text it holds: what the
`generation.started` it got says (0, or the cut-off reply's length for a continue), the
text of the `sync.state` it got, plus every chunk sent to it since. The hub cuts each
`token` frame to start exactly there for that socket: a repeat is skipped or trimmed, a
gap is filled from the run's whole text, and `generation.finished` is preceded by
whatever the socket still lacks. So however snapshots and live chunks cross processes,
Redis and the conversation's queue, a client sees `sync.state` and then chunks that start
where its text ends, and its text ends as the stored reply's does.

A socket that joined mid-run and asked for nothing has no position: it gets chunks as
they come (its first one starts where it starts).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from .frames import TOKEN_FRAME_CHARS

Cut = tuple[Literal["send", "skip", "gap"], int, str]


class Positions:
    """Socket → run → characters of the run's text it holds."""

    def __init__(self) -> None:
        self._held: dict[Any, dict[str, int]] = {}

    def get(self, sock: Any, run_id: str) -> int | None:
        """Return how much of the run's text `sock` holds, or None if it has no position."""
        return self._held.get(sock, {}).get(run_id)

    def set(self, sock: Any, run_id: str, at: int) -> None:
        """Record that `sock` holds the run's text up to `at`."""
        self._held.setdefault(sock, {})[run_id] = at

    def end_run(self, sockets: list[Any], run_id: str) -> None:
        """Forget a finished run for these sockets."""
        for sock in sockets:
            self._held.get(sock, {}).pop(run_id, None)

    def forget(self, sock: Any) -> None:
        """Forget a socket that left."""
        self._held.pop(sock, None)


def cut(held: int | None, index: int, text: str) -> Cut:
    """Decide what of a chunk at `index` a socket holding `held` characters gets.

    ("send", start, piece): `piece`, starting at `start`; ("skip", held, ""): it has it
    all; ("gap", held, ""): the text from `held` to `index` is missing and comes first.
    A socket without a position takes the chunk as it is.
    """
    if held is None or held == index:
        return ("send", index, text)
    if index + len(text) <= held:
        return ("skip", held, "")
    if index < held:
        return ("send", held, text[held - index :])
    return ("gap", held, "")


def pieces(index: int, text: str) -> Iterator[tuple[int, str]]:
    """Split text at `index` into frame-sized pieces (each under the frame limit)."""
    for start in range(0, len(text), TOKEN_FRAME_CHARS):
        yield index + start, text[start : start + TOKEN_FRAME_CHARS]
