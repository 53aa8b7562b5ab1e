"""A tiny HTTP listener on a real socket that records every request it gets (path,
headers, body inflated if gzip or deflate) and answers 200 with an empty JSON object:
for checking what a client sends before Sounding has the door for it, and as the
receiving end of alert deliveries (webhook and Slack) and the forward exporter.

A test can script the answers instead: `recording(answers=[500, 500, (429, {"Retry-After":
"7"}), 200])` answers the requests in that order, and 200 once the script has run out;
`delay_s` holds every answer back (a receiver too slow for the client's timeout)."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    answered: int = 200  # the status it was answered with

    @property
    def status(self) -> int:
        return self.answered

    def json(self) -> Any:
        return json.loads(self.body)


Answer = int | tuple[int, dict[str, str]]


@dataclass
class Recorder:
    url: str  # http://127.0.0.1:<port>
    requests: list[Recorded] = field(default_factory=list)
    answers: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    delay_s: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_answer(self) -> tuple[int, dict[str, str]]:
        with self.lock:
            return self.answers.pop(0) if self.answers else (200, {})

    @property
    def received(self) -> list[Recorded]:
        return self.requests

    def accepted(self) -> list[Recorded]:
        """The requests answered 200."""
        with self.lock:
            return [r for r in self.requests if r.answered == 200]

    def attempts(self) -> int:
        with self.lock:
            return len(self.requests)


class _Handler(BaseHTTPRequestHandler):
    recorder: Recorder

    def _body(self) -> bytes:
        if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        # Chunked (Node's http client sends a stream so): size line, data, CRLF...
        chunks: list[bytes] = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    def _record(self) -> None:
        body = self._body()
        encoding = (self.headers.get("Content-Encoding") or "").lower()
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        status, headers = self.recorder.next_answer()
        with self.recorder.lock:
            self.recorder.requests.append(Recorded(self.command, self.path,
                                                   dict(self.headers.items()), body, status))
        if self.recorder.delay_s:
            time.sleep(self.recorder.delay_s)
        try:
            self._answer(status, headers)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a client that gave up waiting (the delay_s case) is not an error

    def _answer(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status in (204, 304):  # no body allowed
            self.end_headers()
            return
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_POST = do_PUT = do_GET = _record  # noqa: N815 - http.server's names

    def log_message(self, *args: object) -> None:
        pass  # a test's output is for what fails


def free_port() -> int:
    """A port nothing listens on (for a receiver that is down, then comes up)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def recording(answers: Iterable[Answer] = (), delay_s: float = 0.0, port: int = 0,
              path: str = "") -> Iterator[Recorder]:
    """Listen on `port` (any free one by default); the recorder's url ends in `path`."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    recorder = Recorder(f"http://127.0.0.1:{server.server_address[1]}{path}",
                        answers=[(a, {}) if isinstance(a, int) else a for a in answers],
                        delay_s=delay_s)
    server.RequestHandlerClass = type("Handler", (_Handler,), {"recorder": recorder})
    thread = threading.Thread(target=server.serve_forever, daemon=True,
                              # shutdown() waits for a poll: 0.5 s by default, per test.
                              kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
