"""The websocket side of the ASGI router."""

from __future__ import annotations

from channels.routing import URLRouter

from conversations.realtime.auth import SocketAuthRouter
from conversations.routing import websocket_urlpatterns

# Browsers: session cookie behind AllowedHostsOriginValidator. Clients that send a token
# or no Origin: Bearer auth only (see conversations/realtime/auth.py).
websocket_application = SocketAuthRouter(URLRouter(websocket_urlpatterns))
