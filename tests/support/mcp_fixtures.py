"""Real MCP servers for the tests (tests/support/mcp_server.py), registered as staff would."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from tests.support.daphne import free_port, wait_for_port
from toolbox import servers
from toolbox.models import McpServer

SCRIPT = Path(__file__).with_name("mcp_server.py")


@contextmanager
def http_server(name: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """Run an MCP server over streamable HTTP; yield its URL and process."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), name, "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        proc.kill()
        proc.wait(10)


def register_http(name: str, url: str) -> McpServer:
    return McpServer.objects.create(name=name, url=url)


def refresh_now(server: McpServer) -> McpServer:
    """List a server's tools from sync code, even where an event loop runs (Playwright)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(servers.arefresh(server))).result()


def register_stdio(name: str) -> McpServer:
    """A stdio server: the app starts `python mcp_server.py NAME --stdio` for each call."""
    return McpServer.objects.create(
        name=name, command=sys.executable, args=[str(SCRIPT), name, "--stdio"]
    )
