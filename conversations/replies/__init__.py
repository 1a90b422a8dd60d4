"""Question → stored answer: everything between a person's message and the reply stored.

- the run's lifecycle: `orchestrator` claims, streams, stores, announces and follows up
  (`store` its rows, `recovery` a run whose process died, `watchdog` the heartbeat);
  `ask` the one typed request `start_reply` takes;
- the seam to the agent (the only modules of conversations/ that import `agent/`, besides
  the token estimate, the step display and `manage.py prune_checkpoints`): `turns` builds
  a turn from rows and settings, `threads` owns the agent thread's life, `branch_memory`
  and `recall` what a branch remembers, `summaries` the digest, `titles` a conversation's
  title.

The API, the websocket consumer and `manage.py chat` all go through `start_reply` /
`stop_reply` / `sync_state`. They are loaded on first use: a module below the run (the
services deleting a conversation's agent thread) imports `replies.threads` without the
orchestrator, which imports those services.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ask import Ask
    from .orchestrator import StartedReply, start_reply, stop_reply, sync_state

__all__ = ["Ask", "StartedReply", "start_reply", "stop_reply", "sync_state"]


def __getattr__(name: str) -> Any:
    if name == "Ask":
        from .ask import Ask

        return Ask
    if name in __all__:
        from . import orchestrator

        return getattr(orchestrator, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
