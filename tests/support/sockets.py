"""Helpers for tests that speak to a running server over real websockets (`websockets`)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websockets


async def frames_until(ws: Any, *kinds: str, wait: float = 30) -> list[dict]:
    """Read frames until one of `kinds` arrives; return them all, that one last."""
    frames: list[dict] = []
    async with asyncio.timeout(wait):
        while True:
            frames.append(json.loads(await ws.recv()))
            if frames[-1]["type"] in kinds:
                return frames


async def frame_of(ws: Any, kind: str, wait: float = 20) -> dict:
    """Read frames until one of `kind` arrives; return it."""
    return (await frames_until(ws, kind, wait=wait))[-1]


async def close_code(ws: Any, wait: float = 10) -> int:
    """Read until the server closes the socket; return the close code it sent."""
    with pytest.raises(websockets.ConnectionClosed) as closed:
        async with asyncio.timeout(wait):
            while True:
                await ws.recv()
    return closed.value.rcvd.code
