"""Client threads that send uniquely identifiable data and remember what was
acknowledged, so a test can check afterwards that every 202 is in the store.

Every span request carries one fresh trace id (its spans are numbered 1..n) and
every error carries a fresh request_id; a request that got anything but a 202 is
not counted, whatever the server did with it. Senders are bounded in requests
and in time, and stop at the first connection error (the server is gone).
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import requests
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from tests.support.server import Server

SPANS_PER_REQUEST = 20
ERRORS_PER_BATCH = 10


def trace_request(trace_id: bytes, spans: int = SPANS_PER_REQUEST,
                  bad_span_ids: int = 0) -> bytes:
    """An OTLP protobuf body: `spans` spans of one trace, `bad_span_ids` of them invalid."""
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.attributes.append(KeyValue(key="service.name",
                                           value=AnyValue(string_value="durability")))
    scope = rs.scope_spans.add()
    scope.scope.name = "tests"
    start = time.time_ns()
    for i in range(spans):
        span = scope.spans.add(trace_id=trace_id, span_id=(i + 1).to_bytes(8, "big"),
                               name=f"op-{i}", kind=2 if i == 0 else 3,
                               start_time_unix_nano=start, end_time_unix_nano=start + 1_000_000)
        if i < bad_span_ids:
            span.span_id = b"\x01\x02"  # 2 bytes: dropped by the decoder
        if i:
            span.parent_span_id = (1).to_bytes(8, "big")
        span.attributes.append(KeyValue(key="db.system", value=AnyValue(string_value="sqlite")))
    return request.SerializeToString()


def error_batch(tag: str, n: int = ERRORS_PER_BATCH) -> dict[str, Any]:
    return {"errors": [{"exception_class": "ValueError", "message": f"bad value {i}",
                        "backtrace": ["app.py:1 in f"], "fingerprint": f"fp-{i % 3}",
                        "request_id": f"{tag}-{i}"} for i in range(n)]}


class Sender(threading.Thread):
    """One client: alternates span requests and error batches until told to stop."""

    def __init__(self, server: Server, max_requests: int = 400,
                 max_seconds: float = 60.0) -> None:
        super().__init__(daemon=True)
        self.server = server
        self.max_requests = max_requests
        self.max_seconds = max_seconds
        self.stop = threading.Event()
        self.acked_traces: list[str] = []
        self.acked_errors: list[str] = []
        self.statuses: dict[int, int] = {}
        self.connection_errors = 0

    @property
    def acked(self) -> int:
        return len(self.acked_traces) + len(self.acked_errors) // ERRORS_PER_BATCH

    def run(self) -> None:
        session = requests.Session()
        deadline = time.monotonic() + self.max_seconds
        auth = {"Authorization": f"Bearer {self.server.key}"}
        for n in range(self.max_requests):
            if self.stop.is_set() or time.monotonic() > deadline:
                break
            tag = uuid.uuid4().hex
            try:
                if n % 2 == 0:
                    response = session.post(
                        self.server.base + "/ingest/v1/traces", data=trace_request(
                            bytes.fromhex(tag)),
                        headers={**auth, "Content-Type": "application/x-protobuf"}, timeout=30)
                else:
                    response = session.post(self.server.base + "/ingest/errors/batch",
                                            json=error_batch(tag), headers=auth, timeout=30)
            except requests.ConnectionError:
                self.connection_errors += 1
                break
            self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
            if response.status_code != 202:
                continue
            if n % 2 == 0:
                self.acked_traces.append(tag)
            else:
                self.acked_errors.extend(f"{tag}-{i}" for i in range(ERRORS_PER_BATCH))
        session.close()


def start_senders(server: Server, count: int = 4, **kwargs: Any) -> list[Sender]:
    senders = [Sender(server, **kwargs) for _ in range(count)]
    for sender in senders:
        sender.start()
    return senders


def wait_for_acks(senders: list[Sender], at_least: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while sum(s.acked for s in senders) < at_least:
        assert time.monotonic() < deadline, "the collector acknowledged too little to test with"
        assert any(s.is_alive() for s in senders), [s.statuses for s in senders]
        time.sleep(0.02)


def join(senders: list[Sender], timeout: float = 60.0) -> None:
    for sender in senders:
        sender.join(timeout)
        assert not sender.is_alive(), "a sender did not finish"


def assert_all_acknowledged_stored(server: Server, senders: list[Sender]) -> tuple[int, int]:
    """Every acknowledged span and error is in the store; returns what was checked."""
    traces = [t for s in senders for t in s.acked_traces]
    errors = [e for s in senders for e in s.acked_errors]
    stored_spans = server.spans_per_trace()
    missing_spans = [t for t in traces if stored_spans.get(t) != SPANS_PER_REQUEST]
    assert not missing_spans, (f"{len(missing_spans)} of {len(traces)} acknowledged span "
                               f"requests are missing or incomplete")
    stored_errors = {row[0] for row in server.query("SELECT request_id FROM error_events")}
    missing_errors = [e for e in errors if e not in stored_errors]
    assert not missing_errors, (f"{len(missing_errors)} of {len(errors)} acknowledged errors "
                                f"are missing")
    return len(traces) * SPANS_PER_REQUEST, len(errors)
