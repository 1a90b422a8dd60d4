"""Run the app under Granian (a Rust HTTP/websocket server): `python -m chatsite.granian`
takes Granian's own options; the app's defaults come first, so an option given overrides
its default (the last of a repeated option counts).

One worker process (run one per core, as with Daphne: the process is the unit behind the
proxy), ASGI, websockets on, uvloop, Granian's access log off (the app logs what matters).
"""

from __future__ import annotations

import sys

DEFAULTS = [
    *("--interface", "asginl"),  # Channels has no lifespan events
    *("--workers", "1"),
    *("--loop", "uvloop"),
    "--ws",
    # Every open websocket is a request in flight: Granian's default (the backlog, 1,024)
    # would hold back the 1,025th person's socket.
    *("--backpressure", "20000"),
    *("--log-level", "warning"),
]


def main() -> None:
    from granian.cli import cli

    cli(args=[*DEFAULTS, *sys.argv[1:]], prog_name="python -m chatsite.granian")


if __name__ == "__main__":
    main()
