"""Progress records nodes emit while a turn runs; the runner turns them into events.

Records go straight to the sink the runner installs for its turn (a context variable the
graph's node tasks inherit), not through LangGraph's custom stream: its writer wakes the
event loop through a pipe for every record, which for reply text meant a system call per
token. One channel for every record keeps them in the order the nodes wrote them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from agent import steps

Sink = Callable[[dict[str, Any]], None]

_sink: ContextVar[Sink | None] = ContextVar("agent_progress_sink", default=None)


@contextmanager
def collecting(sink: Sink) -> Iterator[None]:
    """Send the records emitted in this context (and the tasks it starts) to `sink`.

    `sink` runs on the calling thread's event loop; a record emitted from another thread
    (a sync node in LangGraph's executor) is handed over to that loop.
    """
    loop = asyncio.get_running_loop()
    owner = threading.get_ident()

    def deliver(record: dict[str, Any]) -> None:
        if threading.get_ident() == owner:
            sink(record)
        else:
            loop.call_soon_threadsafe(sink, record)

    token = _sink.set(deliver)
    try:
        yield
    finally:
        _sink.reset(token)


def emit(record: dict[str, Any]) -> None:
    """Hand one progress record to the running turn (ignored outside a turn)."""
    sink = _sink.get()
    if sink is not None:
        sink(record)


def emit_text(text: str) -> None:
    """Hand a piece of the reply's text to the running turn."""
    emit({"kind": "token", "text": text})


def emit_reasoning(text: str) -> None:
    """Hand a piece of the model's reasoning to the running turn (never the reply's text)."""
    emit({"kind": "reasoning", "text": text})


def emit_step(code: str, **params: Any) -> dict[str, Any]:
    """Report one step by its code in agent/steps.py; return its fields."""
    fields = steps.step(code, **params)
    emit({"kind": "thinking", **fields})
    return fields
