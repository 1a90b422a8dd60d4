"""Realtime replies: one process-wide hub, runs owned by the process, coalesced streams.

The API and the websocket consumer both go through `start_reply` / `stop_reply`.
"""

from __future__ import annotations

from .replies import StartedReply, start_reply, stop_reply, sync_state

__all__ = ["StartedReply", "start_reply", "stop_reply", "sync_state"]
