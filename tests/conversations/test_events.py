"""Every server frame of the protocol is built by one typed builder, and only there."""

from __future__ import annotations

import ast
import inspect
import re
import typing
from pathlib import Path

from django.conf import settings

from conversations import events

ROOT = Path(settings.BASE_DIR)
# Channel-layer envelopes between processes, not frames a client sees.
LAYER_EVENTS = {"chat.frames", "chat.stop"}


def _documented_server_frames() -> set[str]:
    doc = (ROOT / "docs" / "websocket-protocol.md").read_text()
    table = doc.split("## Server → client", 1)[1].split("\n#", 1)[0]
    return set(re.findall(r"^\| `([a-z._]+)` ", table, flags=re.M))


def _builders() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, func in inspect.getmembers(events, inspect.isfunction):
        if func.__module__ != events.__name__ or name.startswith("_"):
            continue
        returned = typing.get_type_hints(func).get("return")
        hints = typing.get_type_hints(returned) if typing.is_typeddict(returned) else {}
        frame_type = hints.get("type")
        if typing.get_origin(frame_type) is typing.Literal:
            for value in typing.get_args(frame_type):
                found.setdefault(value, []).append(name)
    return found


def test_every_documented_server_frame_has_exactly_one_typed_builder():
    documented = _documented_server_frames()
    builders = _builders()
    assert {"message.created", "generation.finished", "conversation.deleted"} <= documented
    assert documented == set(builders), "frames without a builder, or builders not documented"
    assert all(len(names) == 1 for names in builders.values()), builders


def test_no_frame_is_assembled_by_hand_outside_the_events_module():
    allowed = {ROOT / "conversations" / "events.py"}
    frame_types = _documented_server_frames()
    offenders = []
    for path in (ROOT / "conversations").rglob("*.py"):
        if path in allowed or "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Dict):
                continue
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and key.value == "type"
                    and isinstance(value, ast.Constant)
                    and value.value in frame_types - LAYER_EVENTS
                ):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {value.value}")
    assert offenders == []
