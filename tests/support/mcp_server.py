"""A small MCP server for the tests, on the `mcp` SDK's own server class (FastMCP).

    python tests/support/mcp_server.py NAME --http PORT   # streamable HTTP on 127.0.0.1
    python tests/support/mcp_server.py NAME --stdio

Every server has `lookup(key)` (two servers share the name: the app must keep them apart),
`add`, and tools that misbehave on purpose: `sleepy` (past any timeout), `huge` (5 MB),
`die` (the process exits mid-call) and `broken` (its input schema is not an object).
"""

from __future__ import annotations

import argparse
import asyncio
import os

from mcp.server.fastmcp import FastMCP


def build(name: str, port: int = 0) -> FastMCP:
    server = FastMCP(name, host="127.0.0.1", port=port or 8000, log_level="WARNING")

    @server.tool()
    def lookup(key: str) -> str:
        """Look up the code stored under a key."""
        return f"The code for {key} is 7-{name}."

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    @server.tool()
    async def sleepy(seconds: float = 60) -> str:
        """Wait, then answer."""
        await asyncio.sleep(seconds)
        return "awake"

    @server.tool()
    def huge() -> str:
        """Return a very long text."""
        return "x" * 5_000_000

    @server.tool()
    def die() -> str:
        """Stop the server in the middle of the call."""
        os._exit(1)

    @server.tool()
    def broken(value: str) -> str:
        """A tool whose published schema is malformed."""
        return value

    # Publish a schema that is not an object schema (as a careless server might).
    server._tool_manager._tools["broken"].parameters = {"type": "string"}
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--stdio", action="store_true")
    args = parser.parse_args()
    server = build(args.name, args.http)
    server.run("stdio" if args.stdio else "streamable-http")


if __name__ == "__main__":
    main()
