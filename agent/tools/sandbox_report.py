"""Read back what the launcher reported from inside the sandbox: how the code ended, what
stopped it, the images it saved. The code shares the sandbox with the launcher, so nothing
in the report is taken on trust."""

from __future__ import annotations

import base64
import json
import re
import signal
from dataclasses import dataclass
from typing import Any, Literal

from agent.tools.sandbox_limits import Limits

StopReason = Literal["timeout", "cpu_time", "memory", "output_limit", "killed"]
MAGIC = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg"}
_MEMORY_ERROR = re.compile(r"^MemoryError\b", re.M)


@dataclass(frozen=True)
class Image:
    """A PNG or JPEG file the code saved in its working directory."""

    name: str
    content_type: str
    data: bytes


def parse_report(data: bytes, cut: bool) -> dict[str, Any] | None:
    """Return the launcher's report; {} if it started but said nothing usable (killed, or
    cut); None if it never started."""
    if not data.startswith(b"+"):
        return None
    try:
        report = json.loads(data[1:]) if not cut else {}
    except ValueError:
        return {}
    if not isinstance(report, dict):
        return {}
    return {
        key: value
        for key, value in report.items()
        if (key in ("exit_code", "signal") and isinstance(value, int))
        or (key == "timed_out" and isinstance(value, bool))
        or (key == "images" and isinstance(value, list))
        or (key == "left_out" and isinstance(value, int))
    }


def stop_reason(
    *, output_cut: bool, timed_out: bool, signal_number: int | None, finished: bool, stderr: str
) -> StopReason | None:
    if output_cut:
        return "output_limit"
    if timed_out:
        return "timeout"
    if signal_number == signal.SIGXCPU:
        return "cpu_time"
    if _MEMORY_ERROR.search("\n".join(stderr.strip().splitlines()[-3:])):
        return "memory"
    if signal_number is not None or not finished:
        return "killed"
    return None


def valid_images(report: dict[str, Any], limits: Limits) -> tuple[tuple[Image, ...], int]:
    """Return the reported images that are what they claim (checked again here: the code
    shares the sandbox with the launcher)."""
    found: list[Image] = []
    for item in report.get("images", []):
        if len(found) >= limits.max_images or not isinstance(item, dict):
            break
        try:
            data = base64.b64decode(str(item.get("data", "")), validate=True)
        except ValueError:
            continue
        kind = next((kind for magic, kind in MAGIC.items() if data.startswith(magic)), None)
        if kind is None or len(data) > limits.image_bytes:
            continue
        name = "".join(c for c in str(item.get("name", "image")) if c.isprintable())[:200]
        found.append(Image(name=name or "image", content_type=kind, data=data))
    return tuple(found), max(0, int(report.get("left_out", 0)))
