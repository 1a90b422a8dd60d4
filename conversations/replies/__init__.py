"""The reply run: one orchestrator claims, streams, stores, announces and follows up.

The API, the websocket consumer and `manage.py chat` all go through `start_reply` /
`stop_reply` / `sync_state`.
"""

from __future__ import annotations

from .ask import Ask
from .orchestrator import StartedReply, start_reply, stop_reply, sync_state

__all__ = ["Ask", "StartedReply", "start_reply", "stop_reply", "sync_state"]
