"""Daphne's TCP connections send a write at once when nothing waits (chatsite/daphne_patches.py),
and still deliver every byte in order when the kernel takes only part of it."""

from __future__ import annotations

import socket

import pytest
from twisted.internet import tcp

from chatsite.daphne_patches import send_writes_at_once


class WatchingReactor:
    """Records which connections asked to be told when they can write."""

    def __init__(self) -> None:
        self.writers: list[object] = []

    def addWriter(self, writer: object) -> None:  # Twisted's name
        if writer not in self.writers:
            self.writers.append(writer)

    def removeWriter(self, writer: object) -> None:
        if writer in self.writers:
            self.writers.remove(writer)


@pytest.fixture
def pair():
    send_writes_at_once()
    ours, theirs = socket.socketpair()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    reactor = WatchingReactor()
    connection = tcp.Connection(ours, protocol=None, reactor=reactor)
    connection.connected = True
    yield connection, theirs, reactor
    ours.close()
    theirs.close()


def read_all(sock: socket.socket, size: int) -> bytes:
    sock.settimeout(2)
    data = b""
    while len(data) < size:
        data += sock.recv(size - len(data))
    return data


def test_a_frame_is_on_the_wire_without_waiting_for_the_reactor(pair):
    connection, theirs, reactor = pair
    connection.write(b'{"type": "token", "text": "Hi"}')
    assert read_all(theirs, 31) == b'{"type": "token", "text": "Hi"}'
    assert reactor.writers == []  # Twisted's way would watch the socket and send later


def test_what_the_kernel_does_not_take_is_sent_later_and_in_order(pair):
    connection, theirs, reactor = pair
    big = bytes(range(256)) * 4096  # 1 MiB: far more than the socket's buffer
    connection.write(big)
    assert reactor.writers == [connection]  # the rest waits for writability
    connection.write(b"after")  # must not overtake what waits
    received = b""
    theirs.settimeout(2)
    while len(received) < len(big) + 5:
        received += theirs.recv(1 << 16)
        connection.doWrite()  # what the reactor does once the socket can take more
    assert received == big + b"after"
    assert reactor.writers == []
    connection.write(b"again")  # nothing waits any more: at once
    assert read_all(theirs, 5) == b"again" and reactor.writers == []


def test_a_lost_connection_goes_through_twisteds_own_path(pair):
    connection, theirs, reactor = pair
    theirs.close()
    connection.write(b"x" * 100_000)  # the send fails: buffered, the reactor reports the loss
    assert reactor.writers == [connection]
    assert connection.doWrite() is not None  # CONNECTION_LOST


def test_frames_build_their_debug_arguments_without_color():
    """autobahn formats a debug line's arguments for every frame sent; uncolored, they
    skip click's styling (a third of the cost)."""
    import autobahn.util

    send_writes_at_once()
    assert autobahn.util.hlval(42) == "42"
    assert "\x1b[" not in autobahn.util.hltype(
        test_frames_build_their_debug_arguments_without_color
    )
