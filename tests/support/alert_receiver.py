"""A real HTTP receiver for alerts (webhook and Slack formats) on a real socket: it
records every request and answers with the statuses it is told to, in order (200
once they run out), so tests can make it fail a few times, then accept."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    status: int  # what the receiver answered

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class AlertReceiver:
    url: str
    statuses: list[int] = field(default_factory=list)  # answered in order, then 200
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def accepted(self) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.status == 200]

    def attempts(self) -> int:
        with self.lock:
            return len(self.received)


class _Handler(BaseHTTPRequestHandler):
    receiver: AlertReceiver

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.receiver.lock:
            status = self.receiver.statuses.pop(0) if self.receiver.statuses else 200
            self.receiver.received.append(Received(dict(self.headers.items()), body, status))
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


def free_port() -> int:
    """A port nothing listens on (for a receiver that is down, then comes up)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def receiving(port: int = 0, statuses: list[int] | None = None) -> Iterator[AlertReceiver]:
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    receiver = AlertReceiver(f"http://127.0.0.1:{server.server_address[1]}/hook",
                             list(statuses or []))
    server.RequestHandlerClass = type("Handler", (_Handler,), {"receiver": receiver})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
