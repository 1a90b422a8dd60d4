"""Daphne's sockets send what they are given at once when nothing is waiting to be sent.

Twisted's `FileDescriptor.write` never sends: it buffers the bytes, asks the reactor to
watch the socket for writability, sends on the next turn of the loop and stops watching.
Every websocket frame thus paid two changes of the loop's watch list and one more loop
callback wrapped in Twisted's log context: about a tenth of a process streaming 200
replies (bench/capacity.py, py-spy). asyncio's own transports try the send first and buffer
only what the kernel did not take; this does the same for plain TCP connections. Order is
kept: the send is tried only while nothing is buffered, and whatever was not taken (or a
lost connection) goes through Twisted's own path. TLS connections keep Twisted's path.
"""

from __future__ import annotations

from typing import Any


def send_writes_at_once() -> None:
    """Make Twisted's TCP connections try to send a write at once (idempotent)."""
    try:
        import autobahn.util
        from twisted.internet import tcp
    except ImportError:  # another ASGI server
        return
    # autobahn builds a debug line's arguments for every frame it sends, logged or not
    # (`sendData`), colored through click when click is installed: 4.7 us per frame here,
    # 1.6 us uncolored. Nobody reads its debug lines in color.
    autobahn.util._HAS_CLICK = False
    buffered = tcp.Connection.write
    if getattr(buffered, "sends_at_once", False):
        return

    def write(self: Any, data: bytes) -> None:
        if (
            data
            and not self.TLS
            and self.connected
            and not self.disconnecting
            and not self._writeDisconnected
            and not self._tempDataBuffer
            and self.offset == len(self.dataBuffer)
            and type(data) is bytes
        ):
            sent = self.writeSomeData(data)
            if not isinstance(sent, int):  # the connection is lost: Twisted's path says so
                buffered(self, data)
                return
            if sent == len(data):
                return
            data = data[sent:]
        buffered(self, data)

    write.sends_at_once = True  # type: ignore[attr-defined]
    tcp.Connection.write = write  # type: ignore[method-assign]
