"""A TCP proxy a test can stop and start again: a service going away and coming back.

`TcpProxy(("127.0.0.1", 5432)).start()` listens on `proxy.port`; `stop()` cuts every
connection through it and refuses new ones; `start()` forwards on the same port again.
While `answer_new` is set, new connections are handed to it instead of being forwarded
(a server that is full: the open ones keep working); `answered` counts them.
`blackhole()` keeps every connection, open and new, but forwards nothing either way (a
host that drops packets, a frozen server: nothing is refused or reset, and TCP itself sees
no loss, since this proxy acknowledges what it is sent); `forward()` lets what was held
through and forwards again.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable

from tests.support.daphne import free_port


class TcpProxy:
    def __init__(self, target: tuple[str, int], port: int | None = None) -> None:
        self.target = target
        self.port = port or free_port()
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.answer_new: Callable[[socket.socket], None] | None = None
        self.answered = 0
        self._flowing = threading.Event()
        self._flowing.set()

    def blackhole(self) -> None:
        """Accept and keep connections, open and new, but forward nothing, either way."""
        self._flowing.clear()

    def forward(self) -> None:
        """Forward again: what was held goes through, new connections reach the target."""
        self._flowing.set()

    def start(self) -> TcpProxy:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Refuse new connections and cut every open one."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            open_sockets, self._sockets = self._sockets, set()
        for sock in open_sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def upstream_ports(self) -> set[int]:
        """Return the local ports of the open connections to the target (as it sees them)."""
        with self._lock:
            sockets = list(self._sockets)
        ports = set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                if sock.getpeername()[:2] == self.target:
                    ports.add(sock.getsockname()[1])
        return ports

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # stopped
            if (answer := self.answer_new) is not None:
                self.answered += 1
                threading.Thread(target=self._answer, args=(answer, client), daemon=True).start()
                continue
            if not self._flowing.is_set():  # held, unanswered, until forward() or stop()
                with self._lock:
                    self._sockets.add(client)
                threading.Thread(target=self._connect, args=(listener, client), daemon=True).start()
                continue
            self._connect(listener, client)

    def _connect(self, listener: socket.socket, client: socket.socket) -> None:
        """Connect `client` to the target (once forwarding) and pipe both ways."""
        if not self._hold(client):
            return
        with self._lock:
            self._sockets.discard(client)
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        with self._lock:
            if self._listener is not listener:  # stopped meanwhile
                client.close()
                upstream.close()
                return
            self._sockets |= {client, upstream}
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _hold(self, sock: socket.socket) -> bool:
        """Wait while blackholed; say whether `sock` is still open (stop() closes it)."""
        while not self._flowing.wait(0.1):
            if sock.fileno() == -1:
                return False
        return sock.fileno() != -1

    def _answer(self, answer: Callable[[socket.socket], None], client: socket.socket) -> None:
        try:
            client.settimeout(5)
            answer(client)
        except OSError:
            pass
        finally:
            client.close()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if not self._hold(sink):
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            with self._lock:
                self._sockets -= {source, sink}
