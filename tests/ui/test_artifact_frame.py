"""The page artifact previews run in (conversations/artifact_frame.py): a sandbox by its own
Content-Security-Policy, whoever opens it and however."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_the_frame_page_is_a_sandbox_even_when_opened_alone(client):
    response = client.get("/artifacts/frame/")
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert policy.startswith("sandbox allow-scripts")  # no allow-same-origin: opaque
    assert "connect-src 'none'" in policy and "frame-ancestors 'self'" in policy
    assert response["X-Frame-Options"] == "SAMEORIGIN"
    allowed = client.get("/artifacts/frame/?network=1")["Content-Security-Policy"]
    assert "connect-src https: http:" in allowed and "sandbox allow-scripts" in allowed
