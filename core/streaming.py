"""Stream a sync iterator (one that reads the database) as an async one, for ASGI.

Django's ASGI handler consumes a *sync* iterator of a StreamingHttpResponse whole
before sending a byte (it warns so), so a large export would be built in memory.
`astream` hands the response an async iterator that pulls the sync one in a worker
thread a batch at a time: memory stays at one batch, the event loop never blocks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

from asgiref.sync import sync_to_async
from django.utils.http import content_disposition_header

BATCH_BYTES = 256 * 1024


def astream(
    make: Callable[[], Iterator[str | bytes]], *, batch_bytes: int = BATCH_BYTES
) -> AsyncIterator[bytes]:
    """Return an async iterator over the chunks of `make()`, read in batches in a thread."""
    done = object()
    source: list[Iterator[str | bytes]] = []

    def pull() -> bytes | object:
        if not source:
            source.append(make())
        parts, size = [], 0
        for chunk in source[0]:
            data = chunk.encode() if isinstance(chunk, str) else chunk
            parts.append(data)
            size += len(data)
            if size >= batch_bytes:
                break
        return b"".join(parts) if parts else done

    async def chunks() -> AsyncIterator[bytes]:
        while (data := await sync_to_async(pull)()) is not done:
            yield data  # type: ignore[misc]

    return chunks()


def attachment_header(filename: str, *, inline: bool = False) -> str:
    """Return a Content-Disposition value; non-ASCII names use RFC 5987 `filename*`."""
    return content_disposition_header(not inline, filename) or "attachment"
