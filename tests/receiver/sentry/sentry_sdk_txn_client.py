"""A real Python sentry-sdk application, run as a subprocess so that the SDK's global
state (its client, its patches of Tornado, http.client and SQLAlchemy) stays out of
the test process. Usage: `python sentry_sdk_txn_client.py`.

It serves two requests through Tornado with the SDK's Tornado integration (one
answered 200, one 503), each doing a SQL query through SQLAlchemy and an outgoing
HTTP call through http.client (answered 404), all traced by the SDK's own
integrations, plus a manual span of each queue op; the handler sets its
transaction's HTTP status, as applications do. A transport that records what
the SDK would send prints on stdout one JSON list of [item type, payload].
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import sentry_sdk
import tornado.httpserver
import tornado.ioloop
import tornado.netutil
import tornado.web
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport
from sqlalchemy import create_engine, text

SENT: list[list[Any]] = []
RECORDED = threading.Condition()


class RecordingTransport(Transport):
    def capture_envelope(self, envelope: Envelope) -> None:
        with RECORDED:
            for item in envelope.items:
                SENT.append([item.headers.get("type"), item.payload.json])
            RECORDED.notify_all()


class Prices(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def main() -> None:
    sentry_sdk.init(dsn="http://0123456789abcdef0123456789abcdef@127.0.0.1:9/1",
                    transport=RecordingTransport, traces_sample_rate=1.0,
                    release="shop@1.2.3", environment="staging")
    sentry_sdk.set_tag("service", "checkout")
    prices = ThreadingHTTPServer(("127.0.0.1", 0), Prices)
    threading.Thread(target=prices.serve_forever, daemon=True).start()
    prices_url = f"http://127.0.0.1:{prices.server_address[1]}/v1/prices?item=42"
    engine = create_engine("sqlite://")

    class Order(tornado.web.RequestHandler):
        def get(self, order_id: str) -> None:
            with engine.connect() as conn:
                conn.execute(text("SELECT :id AS id"), {"id": int(order_id)}).all()
            try:
                urllib.request.urlopen(prices_url, timeout=10)
            except urllib.error.HTTPError:
                pass
            for op in ("queue.publish", "queue.process"):
                with sentry_sdk.start_span(op=op, name="orders"):
                    pass
            # What an application adds to the Tornado integration's transaction: the
            # status it answers (the integration does not set it).
            transaction = sentry_sdk.get_current_scope().transaction
            assert transaction is not None
            transaction.set_http_status(503 if order_id == "0" else 200)
            if order_id == "0":
                self.set_status(503)
            self.write("ok")

    app = tornado.web.Application([(r"/orders/(\d+)", Order)], log_function=lambda _: None)
    sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
    port = sockets[0].getsockname()[1]
    loop_ready = threading.Event()
    loops: list[tornado.ioloop.IOLoop] = []

    def serve() -> None:
        import asyncio
        asyncio.set_event_loop(asyncio.new_event_loop())
        server = tornado.httpserver.HTTPServer(app)
        server.add_sockets(sockets)
        loops.append(tornado.ioloop.IOLoop.current())
        loop_ready.set()
        loops[0].start()

    threading.Thread(target=serve, daemon=True).start()
    loop_ready.wait()
    for order in ("42", "0"):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/orders/{order}", timeout=10)
        except urllib.error.HTTPError:
            pass
    # The server's transaction ends after the client has its answer: wait for both.
    with RECORDED:
        RECORDED.wait_for(lambda: len(SENT) >= 2, timeout=30)
    sentry_sdk.flush()
    loops[0].add_callback(loops[0].stop)
    prices.shutdown()
    print(json.dumps(SENT))


if __name__ == "__main__":
    main()
