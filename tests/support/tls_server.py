"""A real HTTPS server on 127.0.0.1 that answers every POST 204, for what a client
makes of a certificate it does or does not trust."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _NoContent(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass  # a test's output is for what fails


@contextmanager
def serving_tls(cert: Path, key: Path) -> Iterator[str]:
    """Serve with `cert` and `key` (tests.support.smtp.self_signed_cert); yields the URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NoContent)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True,
                              # shutdown() waits for a poll: 0.5 s by default, per test.
                              kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
