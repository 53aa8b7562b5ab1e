"""Scrubbing end to end (processors/scrub/): a seeded corpus of secrets (card
numbers, tokens, passwords, Bearer and Basic credentials) sent through every door
(OTLP traces, logs and metrics over HTTP, the real Sentry SDK's events and
transaction, the custom error door) to a real collector that stores and forwards, is
in none of the SQLite file's bytes, a pg_dump of the PostgreSQL database, or the
bodies the forward exporter sent upstream. A value hashed by a custom rule still
groups (two events that differed by their card number are one group) and is found
by the error list's search and the user id."""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue, KeyValueList

from sounding.config import DEFAULT_PROCESSORS
from tests.dashboard.data import ADMIN_TOKEN
from tests.support import clients
from tests.support.server import Server, start_server

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)

CORPUS = {
    "card": "4111 1111 1111 1111",
    "card2": "5500-0000-0000-0004",
    "password": "pw-Secr3t-hunter2",
    "token": "tok-Secr3t-88421",
    "bearer": "eyJsecr3tBearerCredential",
    "basic": "dXNlcjpzM2NyM3RQYXNz",
    "customer": "cust-4242",
    "user": "user-7731",
}
# Every secret as the bytes it was sent in, and the card numbers' bare digits too.
NEEDLES = [*(CORPUS[k].encode() for k in ("card", "card2", "password", "token", "bearer",
                                          "basic")),
           b"4111111111111111", b"5500000000000004",
           # The custom rule hashes these: the clear value must not be kept either.
           CORPUS["customer"].encode(), CORPUS["user"].encode()]
KEY = "test-key-acme"
CLIENT = Path(__file__).parent / "scrub_sentry_client.py"
NOW_NS = time.time_ns()


def kv(key: str, value: Any) -> KeyValue:
    if isinstance(value, dict):
        return KeyValue(key=key, value=AnyValue(kvlist_value=KeyValueList(
            values=[kv(k, v) for k, v in value.items()])))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def resource(message: Any) -> None:
    message.resource.attributes.extend([kv("service.name", "shop"),
                                        kv("deploy.token", CORPUS["token"])])


def traces_body() -> bytes:
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add()
    resource(spans)
    span = spans.scope_spans.add().spans.add()
    span.trace_id, span.span_id = bytes(range(1, 17)), bytes(range(1, 9))
    span.name, span.kind = "POST /pay", 2
    span.start_time_unix_nano, span.end_time_unix_nano = NOW_NS - 5_000_000, NOW_NS
    span.attributes.extend([
        kv("http.request.method", "POST"), kv("url.full", "https://shop.example/pay"),
        kv("http.request.header.authorization", "Bearer " + CORPUS["bearer"]),
        kv("user.password", CORPUS["password"]), kv("payment.card", CORPUS["card"]),
        kv("enduser.id", CORPUS["user"]), kv("note", "paid with " + CORPUS["card2"])])
    event = span.events.add()
    event.name, event.time_unix_nano = "exception", NOW_NS - 1_000_000
    event.attributes.extend([
        kv("exception.type", "CardDeclined"),
        kv("exception.message", f"card {CORPUS['card']} declined for {CORPUS['customer']}"),
        kv("exception.stacktrace", "Traceback (most recent call last):\n  File \"pay.py\", "
                                   "line 3, in pay\nCardDeclined: declined")])
    return request.SerializeToString()


def logs_body() -> bytes:
    request = ExportLogsServiceRequest()
    logs = request.resource_logs.add()
    resource(logs)
    records = logs.scope_logs.add().log_records
    first = records.add()
    first.time_unix_nano, first.severity_number = NOW_NS, 17
    first.body.string_value = (f"charge failed for card {CORPUS['card']}, Authorization: "
                               f"Basic {CORPUS['basic']}, password={CORPUS['password']}")
    first.attributes.extend([kv("auth_token", CORPUS["token"]), kv("user.id", CORPUS["user"])])
    second = records.add()
    second.time_unix_nano, second.severity_number = NOW_NS, 9
    second.body.kvlist_value.values.extend([
        kv("event", "login"), kv("password", CORPUS["password"]),
        kv("headers", {"Authorization": "Bearer " + CORPUS["bearer"]})])
    third = records.add()  # an exception as a log record becomes an error
    third.time_unix_nano, third.severity_number = NOW_NS, 17
    third.body.string_value = "refund failed"
    third.attributes.extend([kv("exception.type", "RefundError"),
                             kv("exception.message", f"refund to {CORPUS['card2']} failed")])
    return request.SerializeToString()


def metrics_body() -> bytes:
    request = ExportMetricsServiceRequest()
    metrics = request.resource_metrics.add()
    resource(metrics)
    metric = metrics.scope_metrics.add().metrics.add()
    metric.name = "payments.pending"
    point = metric.gauge.data_points.add()
    point.time_unix_nano, point.as_int = NOW_NS, 3
    point.attributes.extend([kv("api_key", CORPUS["token"]), kv("card", CORPUS["card"])])
    return request.SerializeToString()


def custom_error(message_card: str) -> dict[str, Any]:
    return {
        "exception_class": "PaymentError",
        "message": f"card {message_card} refused (Bearer {CORPUS['bearer']})",
        "backtrace": ["app/pay.rb:12:in `charge'"], "fingerprint": "payment-error",
        "user_id": CORPUS["user"],
        "params": {"password": CORPUS["password"], "card_number": CORPUS["card"],
                   "note": f"token={CORPUS['token']}"},
        "context": {"request": {"url": "https://shop.example/pay",
                                "headers": {"Authorization": "Basic " + CORPUS["basic"],
                                            "X-Api-Key": CORPUS["token"]},
                                "data": {"passwd": CORPUS["password"]}}},
    }


class Recorder:
    """The forward exporter's upstream: records every body it is sent (inflated)."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the standard library's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                recorder.bodies.append(body)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def upstream() -> Iterator[Recorder]:
    recorder = Recorder()
    yield recorder
    recorder.server.shutdown()


def config(tmp_path: Path, upstream: Recorder) -> str:
    path = tmp_path / "scrub.yaml"
    path.write_text(f"""
policy:
  refresh_seconds: 0.2
  scrubbing:
    rules:
      - {{keys: [user.id, user_id, enduser.id], action: hash}}
      - {{pattern: "cust-\\\\d+", action: hash}}
service:
  pipeline:
    receivers: [http]
    processors: [{", ".join(DEFAULT_PROCESSORS)}]
    exporters: [sql, forward]
exporters:
  forward:
    endpoint: {upstream.url}
    max_backoff_seconds: 1
""")
    return str(path)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def project_id(server: Server) -> int:
    return int(server.query("SELECT id FROM projects WHERE name = 'acme'")[0][0])


def send_corpus(server: Server) -> None:
    for path, body in (("traces", traces_body()), ("logs", logs_body()),
                       ("metrics", metrics_body())):
        answer = requests.post(f"{server.base}/ingest/v1/{path}", data=body, timeout=30,
                               headers={"Authorization": f"Bearer {KEY}",
                                        "Content-Type": "application/x-protobuf"})
        assert answer.status_code == 202, (path, answer.text)
    for card in (CORPUS["card"], CORPUS["card2"]):
        answer = server.post("/ingest/errors", json=custom_error(card))
        assert answer.status_code == 202, answer.text
    dsn = server.base.replace("http://", f"http://{KEY}@") + f"/{project_id(server)}"
    python = clients.python(clients.SENTRY_SDK_2)
    done = subprocess.run([python, str(CLIENT)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "SENTRY_DSN": dsn,
                                           "CORPUS": json.dumps(CORPUS)})
    assert done.returncode == 0, done.stderr


def hashed(server: Server, value: str) -> str:
    (key,) = server.query("SELECT value FROM dashboard_secrets WHERE name = 'scrub_hash_key'")[0]
    return "hash:" + hmac.new(bytes.fromhex(key), value.encode(), hashlib.sha256).hexdigest()[:20]


def found(haystack: bytes) -> list[bytes]:
    return [needle for needle in NEEDLES if needle in haystack]


def test_no_secret_of_any_door_is_stored_or_forwarded(
        tmp_path: Path, db_url: str, upstream: Recorder) -> None:
    server = start_server(db_url, keys={"acme": KEY}, config=config(tmp_path, upstream),
                          env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    try:
        send_corpus(server)
        # Everything arrived: 2 custom + 2 Sentry + 1 span event + 1 log record errors,
        # the OTLP span and the transaction's, 3 log records, 1 point.
        wait_for(lambda: len(server.query("SELECT id FROM error_events")) == 6,
                 "the errors were not all stored")
        wait_for(lambda: len(server.query("SELECT trace_id FROM spans")) >= 3,
                 "the spans were not all stored")
        wait_for(lambda: not server.query("SELECT id FROM outbox") and upstream.bodies,
                 "the forward exporter did not send everything")
        assert len(server.query("SELECT * FROM logs")) == 3
        assert len(server.query("SELECT * FROM metric_points")) == 1

        # A hashed value still groups and searches: the two Sentry events differed by
        # their card number only, and are one group whose message holds the customer's
        # hash; the search finds it by that hash; the user id is hashed alike everywhere.
        customer, user = hashed(server, CORPUS["customer"]), hashed(server, CORPUS["user"])
        groups = server.query("SELECT count, message FROM error_groups "
                              "WHERE exception_class = 'ValueError'")
        assert [(int(g.count), customer in g.message) for g in groups] == [(2, True)]
        listed = requests.get(f"{server.base}/api/v1/projects/acme/error-groups",
                              params={"q": customer}, timeout=10,
                              headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).json()
        # The span event's exception named the same customer: found by the same hash.
        assert sorted(i["group"]["exception_class"] for i in listed["items"]) == [
            "CardDeclined", "ValueError"]
        users = {r.user_id for r in server.query(
            "SELECT user_id FROM error_events WHERE user_id IS NOT NULL")}
        assert users == {user}
    finally:
        assert server.stop() == 0, server.log()
    assert "Traceback" not in server.log(), server.log()

    for body in upstream.bodies:
        assert found(body) == [], body
    if db_url.startswith("sqlite"):
        path = Path(db_url.removeprefix("sqlite:///"))
        files = [p for p in path.parent.iterdir() if p.name.startswith(path.name)]
        for file in files:
            assert found(file.read_bytes()) == [], file
    else:
        dsn = db_url.replace("postgresql+psycopg://", "postgresql://")
        dump = subprocess.run(["pg_dump", "--data-only", dsn], capture_output=True,
                              timeout=120, check=True).stdout
        assert b"error_events" in dump and len(dump) > 10_000
        assert found(dump) == []
