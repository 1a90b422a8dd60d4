"""The web app manifest: public, valid JSON, and icons that are what they claim."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from PIL import Image

pytestmark = pytest.mark.django_db


def _static_file(url: str) -> str:
    prefix = "/" + settings.STATIC_URL.lstrip("/")
    assert url.startswith(prefix), url
    found = finders.find(url.removeprefix(prefix))
    assert found, f"{url} is not a static file"
    return found


def test_manifest_is_served_to_anonymous_visitors_as_manifest_json(client):
    response = client.get("/manifest.webmanifest")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/manifest+json"
    manifest = json.loads(response.content)
    assert manifest["name"] == "Chat with memory"
    assert manifest["short_name"]
    assert manifest["start_url"] == "/"
    assert manifest["display"] == "standalone"
    assert manifest["theme_color"].startswith("#")
    assert manifest["background_color"].startswith("#")


def test_manifest_icons_exist_as_pngs_of_the_sizes_they_claim(client):
    icons = json.loads(client.get("/manifest.webmanifest").content)["icons"]
    for icon in icons:
        assert icon["type"] == "image/png"
        with Image.open(_static_file(icon["src"])) as image:
            assert image.format == "PNG"
            assert f"{image.width}x{image.height}" == icon["sizes"], icon["src"]
    sizes = {(icon["sizes"], icon.get("purpose", "any")) for icon in icons}
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= sizes


def test_apple_touch_icon_is_an_opaque_180px_png():
    with Image.open(_static_file(settings.STATIC_URL + "icons/apple-touch-icon.png")) as image:
        assert (image.format, image.size) == ("PNG", (180, 180))
        # iOS paints transparent corners black: the icon is a full-bleed square.
        assert image.convert("RGBA").getextrema()[3][0] == 255


def test_manifest_is_in_the_visitors_language(client):
    response = client.get("/manifest.webmanifest", HTTP_ACCEPT_LANGUAGE="ko")
    manifest = json.loads(response.content)
    assert manifest["lang"] == "ko"
    assert manifest["name"] == "기억하는 채팅"
