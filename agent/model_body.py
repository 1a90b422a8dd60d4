"""Reading a model server's streamed body: its bytes, then its lines, with as few layers
between the socket and the parser as the client allows (agent/openai_stream.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import httpx2

# The one private part of the openai client read here (pinned in pyproject.toml; a test
# fails loudly when it moves: tests/agent/test_openai_private_parts.py).
from openai._vendor.httpx_aiohttp.transport import AiohttpResponseStream, map_aiohttp_exceptions

Read = Callable[[], Awaitable[bytes]]  # the body's next bytes; b"" at its end


def reader(response: httpx2.Response) -> Read:
    """Return what reads the response body: straight from aiohttp's reader when the SDK's
    aiohttp transport (agent/llm.py) carries it, else through httpx's iterator.

    httpx hands each chunk up through four async generators (the response's chunker, its
    raw iterator, the client's timing wrapper, the transport's stream): at 20 tokens/s
    per reply, a tenth of the process's CPU went to the model's body before a line of it
    was read. aiohttp's errors are raised as httpx's, as the transport raises them.
    """
    stream = getattr(response.stream, "_stream", None)
    plain = response.headers.get("content-encoding", "identity").strip().lower() == "identity"
    if plain and isinstance(stream, AiohttpResponseStream):  # httpx decompresses the rest
        content = stream._aiohttp_response.content

        async def read() -> bytes:
            with map_aiohttp_exceptions():
                return await content.readany()

        return read
    chunks = response.aiter_bytes()
    return lambda: anext(chunks, b"")


async def lines(read: Read) -> AsyncIterator[str]:
    """Split the body into lines (an SSE line ends with LF or CRLF; a bare CR, which no
    model server sends, is not taken for one). The SDK's `iter_lines` does the same through
    three more generators per chunk (text, then lines): 4% of a process streaming 200
    replies (bench/capacity.py, py-spy)."""
    rest = b""
    while chunk := await read():
        *complete, rest = (rest + chunk).split(b"\n") if rest else chunk.split(b"\n")
        for line in complete:
            yield line.removesuffix(b"\r").decode("utf-8", "replace")
    if rest:
        yield rest.removesuffix(b"\r").decode("utf-8", "replace")
