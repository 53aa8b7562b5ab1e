"""What an upstream's answer means (exporters/forward/client.py): pure."""

from __future__ import annotations

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from exporters.forward.client import classify


def test_statuses() -> None:
    assert classify(200, {}, b"", "errors").sent
    assert classify(202, {}, b"", "traces").sent
    for code in (429, 502, 503, 504):
        outcome = classify(code, {"Retry-After": "2"}, b"", "traces")
        assert outcome.retry and outcome.retry_after == 2.0 and not outcome.sent
    assert classify(503, {}, b"", "traces").retry_after is None
    for code in (400, 401, 403, 404, 413, 415, 500, 501):
        outcome = classify(code, {"Retry-After": "2"}, b"", "errors")
        assert not outcome.retry and not outcome.sent and outcome.reason == f"http_{code}"


def test_otlp_partial_success_counts_rejected_spans() -> None:
    reply = ExportTraceServiceResponse()
    reply.partial_success.rejected_spans = 3
    body = reply.SerializeToString()
    assert classify(200, {"Content-Type": "application/x-protobuf"}, body,
                    "traces").rejected == 3
    assert classify(200, {"Content-Type": "application/json"}, b"{}", "traces").rejected == 0
    assert classify(200, {"Content-Type": "application/x-protobuf"}, b"\xff\xff",
                    "traces").rejected == 0


def test_otlp_partial_success_counts_rejected_log_records() -> None:
    reply = ExportLogsServiceResponse()
    reply.partial_success.rejected_log_records = 2
    assert classify(202, {"Content-Type": "application/x-protobuf"}, reply.SerializeToString(),
                    "logs").rejected == 2
    # Another signal's reply is not read as one.
    assert classify(202, {"Content-Type": "application/x-protobuf"}, reply.SerializeToString(),
                    "errors").rejected == 0
