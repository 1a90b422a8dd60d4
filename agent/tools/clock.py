"""The current date and time in a named time zone."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from langchain_core.tools import tool

from agent.steps import ToolFailed


def describe_now(timezone: str = "UTC", now: datetime | None = None) -> str:
    """Return the current date and time in `timezone` as readable text."""
    try:
        zone = ZoneInfo(timezone.strip() or "UTC")
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ToolFailed(
            "clock.unknown_zone",
            f"unknown time zone {timezone!r}; use an IANA name like 'Asia/Seoul'",
            zone=timezone,
        ) from exc
    moment = (now or datetime.now(tz=zone)).astimezone(zone)
    return f"{moment.isoformat(timespec='seconds')} ({moment:%A}, {zone.key})"


@tool
def get_current_datetime(timezone: str = "UTC") -> str:
    """Get the current date, time and weekday in an IANA time zone ("Asia/Seoul")."""
    return describe_now(timezone)
