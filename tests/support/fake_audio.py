"""The fake model server's audio endpoints, as OpenAI's API has them (and whisper.cpp's
server, faster-whisper servers and LocalAI copy them):

- `POST /v1/audio/transcriptions`: multipart `file` and `model` (and optional `language`,
  `response_format`) → `{"text": …}`;
- `POST /v1/audio/speech`: JSON `{model, input, voice, response_format}` → the audio bytes
  (a real WAV here: a tone as long as the words would take to say).

With `enabled=False` both answer 404 as a server without them does (llama.cpp's). Every
request is kept in `requests` ({path, model, fields, file_name, content_type, size} or
the JSON body).
"""

from __future__ import annotations

import io
import json
import math
import struct
import threading
import wave
from collections import deque
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

SAMPLE_RATE = 16_000


class FakeAudio:
    def __init__(self) -> None:
        self.enabled = True
        self.requests: list[dict[str, Any]] = []
        self.transcripts: deque[str] = deque()  # scripted answers, served in order
        self.default_transcript = "Dictated text from the fake model server."
        self._lock = threading.Lock()

    def answer(self, path: str, content_type: str, raw: bytes) -> tuple[int, bytes, dict[str, str]]:
        """The status, body and headers for one audio request."""
        if not self.enabled:
            return (
                404,
                json.dumps(
                    {"error": {"message": "Not Found", "type": "invalid_request_error"}}
                ).encode(),
                {},
            )
        if path.endswith("/audio/transcriptions"):
            return self._transcribe(content_type, raw)
        if path.endswith("/audio/speech"):
            return self._speak(json.loads(raw or b"{}"))
        return 404, b'{"error": {"message": "Not Found"}}', {}

    def _transcribe(self, content_type: str, raw: bytes) -> tuple[int, bytes, dict[str, str]]:
        message = BytesParser(policy=HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw
        )
        fields: dict[str, str] = {}
        upload: dict[str, Any] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True) or b""
            if part.get_filename():
                upload = {
                    "file_name": part.get_filename(),
                    "content_type": part.get_content_type(),
                    "size": len(data),
                    "head": data[:4],
                }
            else:
                fields[name] = data.decode()
        record = {
            "path": "/audio/transcriptions",
            "model": fields.get("model"),
            "fields": fields,
            **upload,
        }
        with self._lock:
            self.requests.append(record)
            text = self.transcripts.popleft() if self.transcripts else self.default_transcript
        if not upload or not fields.get("model"):
            return 400, b'{"error": {"message": "file and model are required"}}', {}
        return 200, json.dumps({"text": text}, ensure_ascii=False).encode(), {}

    def _speak(self, body: dict[str, Any]) -> tuple[int, bytes, dict[str, str]]:
        with self._lock:
            self.requests.append({"path": "/audio/speech", **body})
        words = len(str(body.get("input", "")).split())
        seconds = min(30.0, max(0.3, words / 2.5))
        return 200, tone_wav(seconds), {"Content-Type": "audio/wav"}


def tone_wav(seconds: float, *, hertz: float = 440.0) -> bytes:
    """A mono 16-bit WAV of a quiet tone."""
    frames = int(SAMPLE_RATE * seconds)
    samples = (int(3000 * math.sin(2 * math.pi * hertz * n / SAMPLE_RATE)) for n in range(frames))
    out = io.BytesIO()
    with wave.open(out, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(SAMPLE_RATE)
        file.writeframes(b"".join(struct.pack("<h", s) for s in samples))
    return out.getvalue()
