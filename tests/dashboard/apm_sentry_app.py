"""A real Flask service traced by the Sentry Python SDK alone (its Flask, SQLAlchemy
and stdlib integrations), run as a subprocess so that the SDK's global patches stay
out of the test process. Usage: `python apm_sentry_app.py DSN REQUESTS`.

GET /orders/<n> runs an N+1 loop of one SELECT per order line through SQLAlchemy
(SQLite), then calls an untraced pricing server over http.client. The script sends
REQUESTS requests, flushes the SDK (every envelope answered) and prints one JSON
object: what it did.
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import sentry_sdk
import sqlalchemy as sa
from flask import Flask
from sentry_sdk.integrations.flask import FlaskIntegration
from werkzeug.serving import make_server

LINES = 5


class Prices(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


def main() -> None:
    dsn, count = sys.argv[1], int(sys.argv[2])
    # Transactions named by route, not by view function: the operation's name.
    sentry_sdk.init(dsn=dsn, traces_sample_rate=1.0, environment="test",
                    integrations=[FlaskIntegration(transaction_style="url")])
    sentry_sdk.set_tag("service", "checkout")
    prices = ThreadingHTTPServer(("127.0.0.1", 0), Prices)
    threading.Thread(target=prices.serve_forever, daemon=True).start()
    prices_url = f"http://127.0.0.1:{prices.server_address[1]}/prices"
    engine = sa.create_engine(f"sqlite:///{Path(tempfile.mkdtemp()) / 'shop.db'}")
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE lines (id INTEGER PRIMARY KEY, item INTEGER)"))
        conn.execute(sa.text("INSERT INTO lines (id, item) VALUES (:id, :item)"),
                     [{"id": i, "item": i} for i in range(LINES * 10)])
    app = Flask("checkout")

    @app.get("/orders/<int:order>")
    def order(order: int) -> dict[str, int]:
        with engine.connect() as conn:
            items = [conn.execute(sa.text("SELECT item FROM lines WHERE id = :id"),
                                  {"id": order * LINES % 40 + line}).scalar_one()
                     for line in range(LINES)]  # the N+1 loop
        with urllib.request.urlopen(prices_url, timeout=10) as answer:
            answer.read()
        return {"order": order, "items": len(items)}

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for n in range(count):
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/orders/{n}",
                                    timeout=10) as answer:
            assert answer.status == 200
    sentry_sdk.flush(30)
    print(json.dumps({"requests": count, "lines": LINES,
                      "prices": prices_url.split("/")[2]}))


if __name__ == "__main__":
    main()
