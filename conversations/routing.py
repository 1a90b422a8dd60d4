"""Websocket routes (SPEC: /ws/conversations/<id>/)."""

from __future__ import annotations

from django.urls import path

from .consumers import ConversationConsumer, UserConsumer

websocket_urlpatterns = [
    path("ws/conversations/<str:conversation_id>/", ConversationConsumer.as_asgi()),
    # Not in SPEC: list pages hear of new, renamed, archived and deleted conversations.
    path("ws/user/", UserConsumer.as_asgi()),
]
