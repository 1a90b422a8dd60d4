"""Fuzz stage fixtures: the realtime cleanup of tests/realtime applies here too."""

from __future__ import annotations

from tests.realtime.conftest import flush_redis, realtime_cleanup  # noqa: F401
