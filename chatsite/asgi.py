"""ASGI entry point: HTTP through Django, websockets through Channels."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")

from django.core.asgi import get_asgi_application

django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter  # noqa: E402

from chatsite.daphne_bodies import keep_request_bodies_unparsed  # noqa: E402
from chatsite.daphne_close import allow_server_close_codes  # noqa: E402
from chatsite.daphne_writes import send_writes_at_once  # noqa: E402
from chatsite.routing import websocket_application  # noqa: E402

keep_request_bodies_unparsed()
allow_server_close_codes()
send_writes_at_once()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": websocket_application,
    }
)
