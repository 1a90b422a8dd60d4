"""Websocket routes (SPEC: /ws/conversations/<id>/)."""

from __future__ import annotations

from django.urls import path, re_path

from .consumers import ConversationConsumer
from .list_consumer import UserConsumer
from .realtime.sockets import NoSuchSocket

websocket_urlpatterns = [
    path("ws/conversations/<str:conversation_id>/", ConversationConsumer.as_asgi()),
    # Not in SPEC: list pages hear of new, renamed, archived and deleted conversations.
    path("ws/user/", UserConsumer.as_asgi()),
    # Any other path: accepted, then closed 4404 (not a 500 at the handshake).
    re_path(r"", NoSuchSocket.as_asgi()),
]
