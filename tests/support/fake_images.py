"""The fake model server's `POST /v1/images/generations`, as OpenAI's API has it: JSON
`{model, prompt, size, n, response_format}` → `{"created", "data": [{"b64_json"}]}` (a
real PNG of the asked size's shape, drawn with Pillow).

`refuses_response_format`: answer a `response_format` with gpt-image-1's 400 (it always
sends b64_json and takes no such parameter). `enabled=False`: 404, as a server without it.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from typing import Any

from PIL import Image, ImageDraw


class FakeImages:
    def __init__(self) -> None:
        self.enabled = True
        self.refuses_response_format = False
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> tuple[int, bytes, dict[str, str]]:
        with self._lock:
            self.requests.append(body)
        if not self.enabled:
            return 404, b'{"error": {"message": "Not Found", "type": "invalid_request_error"}}', {}
        if self.refuses_response_format and "response_format" in body:
            error = {
                "message": "Unknown parameter: 'response_format'.",
                "type": "invalid_request_error",
                "param": "response_format",
                "code": "unknown_parameter",
            }
            return 400, json.dumps({"error": error}).encode(), {}
        width, height = (int(n) for n in str(body.get("size") or "1024x1024").split("x"))
        payload = {"created": int(time.time()), "data": [{"b64_json": picture(width, height)}]}
        return 200, json.dumps(payload).encode(), {}


def picture(width: int, height: int) -> str:
    """A small PNG (1/16 of the size asked, same shape), base64."""
    image = Image.new("RGB", (max(1, width // 16), max(1, height // 16)), (30, 90, 200))
    ImageDraw.Draw(image).ellipse((8, 8, image.width - 8, image.height - 8), fill=(250, 200, 40))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")
