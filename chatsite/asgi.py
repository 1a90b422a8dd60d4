"""ASGI entry point: HTTP through Django, websockets through Channels."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")

from django.core.asgi import get_asgi_application

django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter  # noqa: E402

from chatsite import daphne_patches  # noqa: E402
from chatsite.routing import websocket_application  # noqa: E402

daphne_patches.apply()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": websocket_application,
    }
)
