"""Websocket routes (SPEC: /ws/conversations/<id>/)."""

from __future__ import annotations

from django.urls import path

from .consumers import ConversationConsumer

websocket_urlpatterns = [
    path("ws/conversations/<str:conversation_id>/", ConversationConsumer.as_asgi()),
]
