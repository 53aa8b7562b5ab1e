"""A TCP proxy in the test process, between the collector and the real PostgreSQL.

Cutting the proxy is how a test takes the database away from one collector
without stopping the PostgreSQL server that other tests share: `cut()` closes
every open connection and turns new ones away (accepted, then closed at once, so
the driver fails fast instead of waiting for a timeout); `restore()` lets
connections through again on the same port.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType


class TcpProxy:
    def __init__(self, upstream: tuple[str, int] = ("127.0.0.1", 5432)) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._cut = False
        self._closed = False
        self.accepted = 0  # connections let through, for tests that want to see traffic
        self._thread = threading.Thread(target=self._accept_loop, name="tcp-proxy", daemon=True)
        self._thread.start()

    def url_for(self, database_url: str) -> str:
        """The same database URL, pointed at the proxy instead of the server."""
        host = f"{self.upstream[0]}:{self.upstream[1]}"
        if host not in database_url:
            raise ValueError(f"{database_url} does not point at {host}")
        return database_url.replace(host, f"127.0.0.1:{self.port}")

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            sockets, self._open = list(self._open), set()
        for sock in sockets:
            _close(sock)

    def restore(self) -> None:
        with self._lock:
            self._cut = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        _close(self._listener)
        self._thread.join(5)

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                refuse = self._cut
            if refuse:
                _close(client)
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                _close(client)
                continue
            server.settimeout(None)
            with self._lock:
                if self._cut:  # cut while we were connecting
                    _close(client)
                    _close(server)
                    continue
                self._open.update((client, server))
                self.accepted += 1
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        with self._lock:
            self._open.discard(src)
            self._open.discard(dst)
        _close(src)
        _close(dst)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
