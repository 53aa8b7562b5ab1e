"""A tiny HTTP listener on a real socket that records every request it gets (path,
headers, body inflated if gzip or deflate) and answers 200 with an empty JSON object:
for checking what a client sends before Sounding has the door for it."""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Recorder:
    url: str  # http://127.0.0.1:<port>
    requests: list[Recorded] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    recorder: Recorder

    def _body(self) -> bytes:
        if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        # Chunked (Node's http client sends a stream so): size line, data, CRLF...
        chunks = []
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
        self.recorder.requests.append(Recorded(self.command, self.path,
                                               dict(self.headers.items()), body))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_POST = do_PUT = do_GET = _record  # noqa: N815 - http.server's names

    def log_message(self, *args: object) -> None:
        pass  # a test's output is for what fails


@contextmanager
def recording() -> Iterator[Recorder]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    recorder = Recorder(f"http://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = type("Handler", (_Handler,), {"recorder": recorder})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
