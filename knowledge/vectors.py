"""Chunk vectors: computed after an upload (in the background) or by `embed_chunks`, and
searched exactly, in numpy, over one user's chunks.

No vector index is needed at this scale: a user's matrix (512 floats per chunk) is read
once per process and kept while it is current (a count over an index of the user's
embedded chunks tells, asked at most every few seconds), then one matrix product ranks
every chunk (55,000 chunks: ~110 MB of float32 and a few milliseconds). Past a few
hundred thousand chunks per user, use a vector index (pgvector on a managed PostgreSQL).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import Count, Max, Q

from . import embeddings
from .models import DocumentChunk
from .selectors import in_scope

logger = logging.getLogger(__name__)
BATCH = 256
CACHED_USERS = 8
# (user, model) → (stamp, matrix, ids, when the stamp was last checked)
_cache: OrderedDict[tuple[Any, str], tuple[tuple[int, int], np.ndarray, list[int], float]] = (
    OrderedDict()
)
RECHECK_SECONDS = 5.0
_cache_lock = threading.Lock()


def chunk_text(chunk: DocumentChunk | dict[str, Any]) -> str:
    """What a chunk's vector is made of: its heading, then its text."""
    heading = chunk["heading"] if isinstance(chunk, dict) else chunk.heading
    text = chunk["text"] if isinstance(chunk, dict) else chunk.text
    return f"{heading}\n{text}" if heading else text


def pending(owner_id: Any = None, document_id: Any = None) -> Any:
    """The chunks without a vector of the current model (of a user, or a document)."""
    rows = DocumentChunk.objects.exclude(embedding_model=embeddings.model_id())
    if owner_id is not None:
        rows = rows.filter(owner_id=owner_id)
    if document_id is not None:
        rows = rows.filter(document_id=document_id)
    return rows


def embed_pending(
    *,
    owner_id: Any = None,
    document_id: Any = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Embed every pending chunk, a batch per transaction (so an interrupted run keeps
    what it did and the next one goes on from there); return how many were embedded."""
    model = embeddings.model_id()
    done = 0
    while True:
        batch = list(
            pending(owner_id, document_id).order_by("id").values("id", "heading", "text")[:BATCH]
        )
        if not batch:
            return done
        vectors = embeddings.embed([chunk_text(row) for row in batch])
        with transaction.atomic():
            for row, vector in zip(batch, vectors, strict=True):
                DocumentChunk.objects.filter(id=row["id"]).update(
                    embedding=embeddings.to_bytes(vector), embedding_model=model
                )
        done += len(batch)
        forget(owner_id)
        if progress is not None:
            progress(done)


def nearest(
    *,
    user_id: Any,
    query: Callable[[], np.ndarray],
    scope: Any,
    limit: int,
    documents: Collection[str] | None = None,
) -> list[tuple[int, float]]:
    """Return `(chunk id, cosine)` of the user's `limit` chunks nearest the query's vector
    (`query()`, made only when the user has embedded chunks: a process whose users have no
    documents never loads a model), best first; the user's knowledge base, and the
    documents attached in `scope` (with `documents`: those instead of the knowledge base)."""
    ids, matrix = _matrix(user_id)
    if not ids:
        return []
    scores = matrix @ query().astype(np.float32)
    allowed = _in_scope(user_id, scope, ids, documents)
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    count = min(limit, len(ids))
    best = np.argpartition(-scores, count - 1)[:count]
    best = best[np.argsort(-scores[best])]
    return [(ids[i], float(scores[i])) for i in best if np.isfinite(scores[i])]


def _matrix(user_id: Any) -> tuple[list[int], np.ndarray]:
    """The user's embedded chunks as ids and a matrix, read again only when they changed.

    Whether they changed is asked of the database (a count over an index) at most every
    RECHECK_SECONDS per user and process: embedding in this process forgets the user's
    matrix at once (`forget`), another process's work shows within RECHECK_SECONDS."""
    model = embeddings.model_id()
    key = (user_id, model)
    now = time.monotonic()
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and now - cached[3] < RECHECK_SECONDS:
            _cache.move_to_end(key)
            return cached[2], cached[1]
    rows = DocumentChunk.objects.filter(owner_id=user_id, embedding_model=model)
    stamp_row = rows.aggregate(n=Count("id"), top=Max("id"))
    stamp = (stamp_row["n"], stamp_row["top"] or 0)
    if cached is not None and cached[0] == stamp:
        with _cache_lock:
            _cache[key] = (stamp, cached[1], cached[2], now)
        return cached[2], cached[1]
    found = list(rows.order_by("id").values_list("id", "embedding"))
    ids = [row[0] for row in found]
    matrix = (
        np.vstack([embeddings.from_bytes(row[1]) for row in found])
        if found
        else np.zeros((0, 1), dtype=np.float32)
    )
    with _cache_lock:
        _cache[key] = (stamp, matrix, ids, now)
        _cache.move_to_end(key)
        while len(_cache) > CACHED_USERS:
            _cache.popitem(last=False)
    return ids, matrix


def forget(owner_id: Any) -> None:
    """Drop this process's matrices of a user (None: of everyone): their vectors changed."""
    with _cache_lock:
        for key in [key for key in _cache if owner_id is None or key[0] == owner_id]:
            del _cache[key]


def _in_scope(
    user_id: Any, scope: Any, ids: Iterable[int], documents: Collection[str] | None = None
) -> np.ndarray | None:
    """Which of `ids` a search in `scope` may return (None: all of them): chunks of the
    knowledge base (or of `documents`), and of documents attached in this conversation."""
    if documents is not None:
        chunks = DocumentChunk.objects.filter(in_scope(scope, documents), owner_id=user_id)
        inside = set(chunks.values_list("id", flat=True))
        return np.fromiter((i in inside for i in ids), dtype=bool)
    attached = DocumentChunk.objects.filter(owner_id=user_id).exclude(scope__isnull=True)
    if not attached.exists():
        return None
    outside = set(attached.filter(~Q(scope=scope)).values_list("id", flat=True))
    return np.fromiter((i not in outside for i in ids), dtype=bool)
