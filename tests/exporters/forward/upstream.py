"""A scripted upstream for the forwarding exporter's tests: a small Tornado app on
a free port of the loopback that records every request and answers the statuses
it is told to, in order (then 200)."""

from __future__ import annotations

import gzip
import time
from dataclasses import dataclass, field
from typing import Any

from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from tornado.web import Application, RequestHandler


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes  # inflated
    at: float


@dataclass
class Upstream:
    # (status, headers) answered in turn; 200 once they run out.
    script: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    server: HTTPServer | None = None
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        upstream = self

        class Handler(RequestHandler):
            def post(self, *_: Any) -> None:
                body = self.request.body
                if self.request.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                upstream.received.append(Received(self.request.path,
                                                  dict(self.request.headers), body,
                                                  time.monotonic()))
                status, headers = upstream.script.pop(0) if upstream.script else (200, {})
                self.set_status(status)
                for name, value in headers.items():
                    self.set_header(name, value)

        sockets = bind_sockets(self.port, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        self.server = HTTPServer(Application([(r"/.*", Handler)]))
        self.server.add_sockets(sockets)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
