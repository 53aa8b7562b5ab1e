"""Two real Flask services, auto-instrumented by the OpenTelemetry Python
instrumentations, run as a subprocess so that their global patches stay out of the
test process. Usage: `python apm_app.py ENDPOINT KEY REQUESTS`.

`shop` (Flask, SQLAlchemy on a SQLite file, `requests`) serves GET /orders/<n>: an
N+1 loop of one SELECT per order line through SQLAlchemy, then a call to
`inventory`. `inventory` (Flask, the sqlite3 module) serves GET /stock/<id> with one
query. Each service has its own TracerProvider and `service.name`, exporting with
the OTLP/HTTP exporter to ENDPOINT. The script sends REQUESTS requests to shop,
flushes both providers and prints one JSON object: what it did, for the test to
check the map against. Optional: MODE `fixed` reads an order's lines in one query
instead of the N+1 loop (`loop`, the default), VERSION is both services'
`service.version` (their release), and EXPORT `simple` exports with
SimpleSpanProcessor, each span in an export request of its own as it ends, instead of
BatchSpanProcessor (`batch`, the default).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path

import requests
import sqlalchemy as sa
from flask import Flask
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.flask import FlaskInstrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor
from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from werkzeug.serving import make_server

LINES = 5  # order lines: the N+1 loop's queries per request


def provider(name: str, endpoint: str, key: str, version: str, export: str
             ) -> TracerProvider:
    tp = TracerProvider(resource=Resource.create({"service.name": name,
                                                  "service.version": version,
                                                  "deployment.environment": "test"}))
    processor = SimpleSpanProcessor if export == "simple" else BatchSpanProcessor
    tp.add_span_processor(processor(OTLPSpanExporter(
        endpoint=endpoint, headers={"Authorization": f"Bearer {key}"})))
    return tp


def serve(app: Flask) -> tuple[str, threading.Thread]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{server.port}", thread


def main() -> None:
    endpoint, key, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mode = sys.argv[4] if len(sys.argv) > 4 else "loop"
    version = sys.argv[5] if len(sys.argv) > 5 else "1.0.0"
    export = sys.argv[6] if len(sys.argv) > 6 else "batch"
    shop_tp, inventory_tp = (provider(n, endpoint, key, version, export)
                             for n in ("shop", "inventory"))
    folder = Path(tempfile.mkdtemp())

    stock_db = folder / "stock.db"
    with sqlite3.connect(stock_db) as conn:
        conn.execute("CREATE TABLE stock (item INTEGER PRIMARY KEY, n INTEGER)")
        conn.executemany("INSERT INTO stock VALUES (?, ?)", [(i, i * 10) for i in range(50)])
    inventory = Flask("inventory")
    FlaskInstrumentor().instrument_app(inventory, tracer_provider=inventory_tp)

    @inventory.get("/stock/<int:item>")
    def stock(item: int) -> dict[str, int]:
        # This connection alone: SQLAlchemy's own sqlite3 connections are shop's.
        conn = SQLite3Instrumentor.instrument_connection(sqlite3.connect(stock_db),
                                                         tracer_provider=inventory_tp)
        try:
            cursor = conn.cursor()  # the instrumented connection traces its cursors
            row = cursor.execute("SELECT n FROM stock WHERE item = ?", (item,)).fetchone()
        finally:
            conn.close()
        return {"item": item, "n": row[0]}

    inventory_url, _ = serve(inventory)

    engine = sa.create_engine(f"sqlite:///{folder / 'shop.db'}")
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE lines (id INTEGER PRIMARY KEY, item INTEGER)"))
        conn.execute(sa.text("INSERT INTO lines (id, item) VALUES (:id, :item)"),
                     [{"id": i, "item": i % 50} for i in range(LINES * 10)])
    # skip_dep_check: the instrumentation declares SQLAlchemy below 2.1, and works on it.
    SQLAlchemyInstrumentor().instrument(engine=engine, tracer_provider=shop_tp,
                                        skip_dep_check=True)
    RequestsInstrumentor().instrument(tracer_provider=shop_tp)
    shop = Flask("shop")
    FlaskInstrumentor().instrument_app(shop, tracer_provider=shop_tp)

    @shop.get("/orders/<int:order>")
    def order(order: int) -> dict[str, int]:
        ids = [order * LINES % 40 + line for line in range(LINES)]
        with engine.connect() as conn:
            if mode == "fixed":  # the lines in one query
                query = sa.text("SELECT item FROM lines WHERE id IN :ids ORDER BY id")
                items = list(conn.execute(query.bindparams(sa.bindparam("ids", expanding=True)),
                                          {"ids": ids}).scalars())
            else:
                items = [conn.execute(sa.text("SELECT item FROM lines WHERE id = :id"),
                                      {"id": i}).scalar_one()  # the N+1 loop
                         for i in ids]
        got = requests.get(f"{inventory_url}/stock/{items[0]}", timeout=10).json()
        return {"order": order, "stock": got["n"]}

    shop_url, _ = serve(shop)
    for n in range(count):  # urllib: the test's own calls make no client spans
        with urllib.request.urlopen(f"{shop_url}/orders/{n}", timeout=10) as answer:
            assert answer.status == 200
    ok = inventory_tp.force_flush(30_000) and shop_tp.force_flush(30_000)
    print(json.dumps({"flushed": ok, "requests": count, "lines": LINES, "mode": mode,
                      "export": export, "inventory": inventory_url.rsplit("//", 1)[1]}))


if __name__ == "__main__":
    main()
