"""A psycopg connection that stops waiting for a server that does not answer.

PostgreSQL's `statement_timeout` ends a slow statement on the server, but it cannot help
when the statement never reaches the server or its answer never comes back: packets
dropped, a frozen host or process, a middlebox that holds the connection open. TCP does
not notice either when something on the path still acknowledges (`tcp_user_timeout` sees
only unacknowledged data, keepalives only a silent peer). psycopg waits on the socket
forever by default; this connection gives each wait (a statement and its results, a pool's
check) psycopg's own `timeout`, `deadline` seconds. When it passes, the connection is
closed: what the server did with the statement is unknown, and cancelling it would need
the same server. No Django here.

`notifies()` without a timeout would end at the deadline: nothing here LISTENs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg import errors


class DeadlineConnection(psycopg.Connection):
    # Seconds a wait for the server may take; None: as long as it takes.
    deadline: float | None = None

    def wait(self, gen: Any, *args: Any, timeout: float | None = None, **kwargs: Any) -> Any:
        """Consume `gen` (psycopg's), within `timeout` or else this connection's deadline."""
        if timeout is not None or self.deadline is None:
            return super().wait(gen, *args, timeout=timeout, **kwargs)
        try:
            return super().wait(gen, *args, timeout=self.deadline, **kwargs)
        except errors._WaitTimeout as exc:  # psycopg's, for callers to convert
            self.close()  # the pool discards it and connects anew
            raise psycopg.OperationalError(
                f"PostgreSQL did not answer within {self.deadline:g} s: connection closed"
            ) from exc

    @contextlib.contextmanager
    def deadline_of(self, seconds: float | None) -> Iterator[None]:
        """Wait at most `seconds` for the server meanwhile (None: as long as it takes)."""
        kept, self.deadline = self.deadline, seconds
        try:
            yield
        finally:
            self.deadline = kept
