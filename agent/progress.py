"""Progress records nodes emit on LangGraph's custom stream; the runner turns them into events."""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer

from agent.events import ThinkingStep


def emit(record: dict[str, Any]) -> None:
    """Write one progress record to the run's custom stream (ignored outside a run)."""
    try:
        writer = get_stream_writer()
    except RuntimeError:
        return
    writer(record)


def emit_thinking(step: ThinkingStep, content: str) -> None:
    """Report one reasoning step ("route", "memory", "generate", ...)."""
    emit({"kind": "thinking", "step": step, "content": content})
