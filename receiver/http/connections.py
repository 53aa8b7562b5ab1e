"""A cap on an HTTP receiver's open connections.

Each connection costs memory (Tornado's stream and buffers, a handler, a body
being read) and a file descriptor, and a client can open many and send slowly.
Past `max_connections`, a new connection is answered `503` with `Retry-After` as
soon as it is accepted, then closed: Tornado's HTTPServer has no such bound.

Closing a socket whose receive queue still holds the client's request makes the
kernel send a reset, which can reach the client before it read our answer. So a
refused connection is closed gracefully: our side is shut for writing, and what
the client still sends is read and dropped, for up to a second and 256 KiB, by
at most `max_connections` such connections at once (beyond, closed at once).
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

from tornado.httpserver import HTTPServer
from tornado.iostream import IOStream, StreamClosedError

from runtime import telemetry

LINGER_SECONDS = 1.0
LINGER_MAX_BYTES = 256 * 1024


def _refusal(retry_after: int) -> bytes:
    body = json.dumps({"error": "the collector has too many open connections; retry later"})
    return (f"HTTP/1.1 503 Service Unavailable\r\nServer: sounding\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"Retry-After: {retry_after}\r\nConnection: close\r\n\r\n{body}").encode()


class BoundedHTTPServer(HTTPServer):
    # Tornado's HTTPServer is configured through initialize(), not __init__.
    def initialize(self, *args: Any, name: str = "http", max_connections: int = 512,
                   retry_after: int = 1, **kwargs: Any) -> None:
        super().initialize(*args, **kwargs)
        self.max_connections = max_connections
        self.open_connections = 0
        self._gauge = telemetry.OPEN_CONNECTIONS.labels(name)
        self._refusal = _refusal(retry_after)
        self._lingering = 0
        self._refusing: set[asyncio.Task[None]] = set()

    def handle_stream(self, stream: IOStream, address: tuple[Any, ...]) -> None:
        if self.open_connections >= self.max_connections:
            telemetry.REFUSED.labels("connection", "unavailable").inc()
            task = asyncio.get_running_loop().create_task(self._refuse(stream))
            self._refusing.add(task)
            task.add_done_callback(self._refusing.discard)
            return
        self.open_connections += 1
        self._gauge.set(self.open_connections)
        super().handle_stream(stream, address)

    def on_close(self, server_conn: object) -> None:
        self.open_connections -= 1
        self._gauge.set(self.open_connections)
        super().on_close(server_conn)

    async def _refuse(self, stream: IOStream) -> None:
        self._lingering += 1
        try:
            await stream.write(self._refusal)
            if self._lingering > self.max_connections:
                return
            assert stream.socket is not None
            stream.socket.shutdown(socket.SHUT_WR)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + LINGER_SECONDS
            drained = 0
            while drained < LINGER_MAX_BYTES and loop.time() < deadline:
                data = await asyncio.wait_for(stream.read_bytes(65536, partial=True),
                                              deadline - loop.time())
                drained += len(data)
        except (StreamClosedError, TimeoutError, OSError):
            pass  # the client is gone, or had a second to read the answer
        finally:
            self._lingering -= 1
            stream.close()
