"""The web app manifest: what a browser needs to install the site as an app."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.templatetags.static import static
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

CONTENT_TYPE = "application/manifest+json"
# The light theme's page background (static/css/app.css `--bg`): the splash screen and
# the title bar match the page's first paint; the pages' <meta name="theme-color">
# carries the dark one.
BACKGROUND_COLOR = "#f7f7f8"
THEME_COLOR = "#f7f7f8"
# (file under static/, size, purpose): rendered from static/favicon.svg by bin/make-icons.
ICONS = [
    ("icons/icon-192.png", 192, "any"),
    ("icons/icon-512.png", 512, "any"),
    ("icons/icon-maskable-192.png", 192, "maskable"),
    ("icons/icon-maskable-512.png", 512, "maskable"),
]


def manifest(language: str) -> dict[str, Any]:
    """Return the manifest's fields, names in the active language."""
    return {
        "id": "/",
        "name": _("Chat with memory"),
        "short_name": _("Chat"),
        "lang": language,
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "background_color": BACKGROUND_COLOR,
        "theme_color": THEME_COLOR,
        "icons": [
            {"src": static(src), "sizes": f"{n}x{n}", "type": "image/png", "purpose": purpose}
            for src, n, purpose in ICONS
        ],
    }


@login_not_required  # the browser fetches it without credentials, before anyone logs in
@require_safe
def web_manifest(request: HttpRequest) -> HttpResponse:
    """Serve the manifest; no service worker goes with it (nothing is cached offline)."""
    body = json.dumps(manifest(get_language()), indent=2)
    return HttpResponse(body, content_type=CONTENT_TYPE)
