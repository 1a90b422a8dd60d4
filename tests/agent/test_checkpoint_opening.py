"""Replies that start together on a fresh process share one opening of the checkpointer,
and its failure: with PostgreSQL full (or away) a burst of replies took turns, each
waiting out its own pool timeout under a lock (the eighth of a burst waited 40 s)."""

from __future__ import annotations

import asyncio
import time

import pytest

from agent import checkpoint

OPEN_SECONDS = 0.3


async def test_callers_at_once_share_one_failed_opening_and_the_next_tries_again(monkeypatch):
    opened = []

    async def failing_open(url: str):
        opened.append(url)
        await asyncio.sleep(OPEN_SECONDS)
        raise OSError("sorry, too many clients already")

    monkeypatch.setattr(checkpoint, "open_checkpointer", failing_open)
    started = time.monotonic()
    results = await asyncio.gather(
        *(checkpoint.get_checkpointer("postgres://full/db") for _ in range(8)),
        return_exceptions=True,
    )
    took = time.monotonic() - started

    assert len(opened) == 1  # one opening for the eight…
    assert all(isinstance(r, OSError) for r in results)  # …whose failure all of them got
    assert took < 3 * OPEN_SECONDS  # at once, not one after another
    with pytest.raises(OSError):  # a later caller tries again
        await checkpoint.get_checkpointer("postgres://full/db")
    assert len(opened) == 2


async def test_a_cancelled_caller_leaves_the_opening_to_the_others(monkeypatch):
    saver = object()

    async def slow_open(url: str):
        await asyncio.sleep(OPEN_SECONDS)
        return saver

    monkeypatch.setattr(checkpoint, "open_checkpointer", slow_open)
    impatient = asyncio.create_task(checkpoint.get_checkpointer("sqlite:///x"))
    patient = asyncio.create_task(checkpoint.get_checkpointer("sqlite:///x"))
    await asyncio.sleep(0)
    impatient.cancel()
    assert await patient is saver
    assert await checkpoint.get_checkpointer("sqlite:///x") is saver  # kept for the loop
    checkpoint._SAVERS.pop(asyncio.get_running_loop(), None)
