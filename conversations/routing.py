"""Websocket routes (SPEC: /ws/conversations/<id>/); the consumer arrives with realtime."""

from __future__ import annotations

websocket_urlpatterns: list = []
