"""Run Daphne on uvloop: `python -m chatsite.serve` takes Daphne's own arguments.

Daphne builds its event loop when `daphne.server` is first imported (Twisted's asyncio
reactor is installed on it), so the loop policy is set here, before that import: every
loop the server makes is then a uvloop one. `CHAT_UVLOOP=0` keeps asyncio's own loop.
"""

from __future__ import annotations

import asyncio
import os


def main() -> None:
    """Set the loop policy, then hand the command line to Daphne."""
    if os.environ.get("CHAT_UVLOOP", "1") != "0":
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    from daphne.cli import CommandLineInterface  # imports daphne.server: the loop is made

    CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
