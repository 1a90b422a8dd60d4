"""The fake model server's `POST /v1/embeddings`, as OpenAI's API has it: JSON `{model,
input: [texts]}` → `{"object": "list", "data": [{"object": "embedding", "index", "embedding"}],
"model", "usage"}`. Each text's vector is made from its words (the same text, the same
vector), 32 floats. `delay` paces each request; `texts` counts every text asked about.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from typing import Any

DIMENSIONS = 32


class FakeEmbeddings:
    def __init__(self) -> None:
        self.delay = 0.0
        self.texts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> tuple[int, bytes, dict[str, str]]:
        texts = body.get("input") or []
        texts = [texts] if isinstance(texts, str) else list(texts)
        with self._lock:
            self.texts.update(texts)
        if self.delay:
            time.sleep(self.delay)
        data = [
            {"object": "embedding", "index": n, "embedding": vector(text)}
            for n, text in enumerate(texts)
        ]
        payload = {
            "object": "list",
            "data": data,
            "model": body.get("model", ""),
            "usage": {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": 0},
        }
        return 200, json.dumps(payload).encode(), {}


def vector(text: str) -> list[float]:
    """A text's vector: its words hashed into DIMENSIONS buckets."""
    buckets = [0.0] * DIMENSIONS
    for word in text.lower().split():
        buckets[hashlib.blake2b(word.encode(), digest_size=2).digest()[0] % DIMENSIONS] += 1.0
    return buckets
