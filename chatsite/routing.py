"""The websocket side of the ASGI router."""

from __future__ import annotations

from channels.routing import URLRouter

from conversations.realtime.auth import SocketAuthRouter
from conversations.routing import websocket_urlpatterns
from core.unavailable import close_sockets_when_unavailable

# Browsers: session cookie behind AllowedHostsOriginValidator. Clients that send a token
# or no Origin: Bearer auth only (see conversations/realtime/auth.py). PostgreSQL or Redis
# out of reach, even while authenticating: close 1013 (core/unavailable.py).
websocket_application = close_sockets_when_unavailable(
    SocketAuthRouter(URLRouter(websocket_urlpatterns))
)
