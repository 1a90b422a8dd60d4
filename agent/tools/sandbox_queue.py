"""Python runs take turns: a few at once in this server process, one at a time per person.

A run over either limit waits for its turn, first come first served; it is not refused (a
model that sends three programs at once gets three answers, one after another). The queue
belongs to the event loop it runs on (asyncio's semaphores do): one per server process.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

RUNS_AT_ONCE = 2  # in one server process: each may hold a run's memory budget
RUNS_AT_ONCE_PER_OWNER = 1  # of one person's (or, unnamed, one conversation's)


@dataclass
class _Owner:
    slots: asyncio.Semaphore
    users: int = 0  # runs holding or waiting for a slot: the entry goes when none is left


@dataclass
class RunQueue:
    """Where runs wait for their turn: at most `at_once` run, `per_owner` of one owner's."""

    at_once: int = RUNS_AT_ONCE
    per_owner: int = RUNS_AT_ONCE_PER_OWNER
    _slots: asyncio.Semaphore = field(init=False)
    _owners: dict[str, _Owner] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._slots = asyncio.Semaphore(self.at_once)

    @contextlib.asynccontextmanager
    async def turn(self, owner: str | None) -> AsyncIterator[None]:
        """Wait for the owner's turn, then for a free slot; hold both until the block ends.

        The owner's slot comes first, so one person's queued runs never hold the process's
        slots while they wait for each other."""
        async with self._owner_slot(owner), self._slots:
            yield

    def owners(self) -> int:
        """Return how many owners have a run running or waiting (none are kept past it)."""
        return len(self._owners)

    @contextlib.asynccontextmanager
    async def _owner_slot(self, owner: str | None) -> AsyncIterator[None]:
        if owner is None:
            yield
            return
        entry = self._owners.setdefault(owner, _Owner(asyncio.Semaphore(self.per_owner)))
        entry.users += 1
        try:
            async with entry.slots:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._owners[owner]


_QUEUES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RunQueue] = (
    weakref.WeakKeyDictionary()
)


def run_queue() -> RunQueue:
    """Return this event loop's queue (the server process's: it runs one loop)."""
    loop = asyncio.get_running_loop()
    queue = _QUEUES.get(loop)
    if queue is None:
        queue = _QUEUES[loop] = RunQueue()
    return queue
