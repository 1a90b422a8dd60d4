"""A hub socket for tests: keeps every frame the hub sends to a conversation."""

from __future__ import annotations

import json


class Sink:
    token_id = None

    def __init__(self) -> None:
        self.frames: list[dict] = []

    async def deliver(self, text: str, frame_type: str) -> None:
        self.frames.append(json.loads(text))

    async def close_with(self, code: int) -> None:
        """Nothing to close."""
