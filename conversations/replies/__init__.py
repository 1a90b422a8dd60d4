"""The reply run: one orchestrator claims, streams, stores, announces and follows up.

The API, the websocket consumer and `manage.py chat` all go through `start_reply` /
`stop_reply` / `sync_state`.
"""

from __future__ import annotations

from .orchestrator import StartedReply, clean_content, start_reply, stop_reply, sync_state

__all__ = ["StartedReply", "clean_content", "start_reply", "stop_reply", "sync_state"]
