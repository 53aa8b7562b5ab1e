"""What an upstream's answer means (exporters/forward/client.py): pure, but for one
row posted to a real server whose certificate is not trusted."""

from __future__ import annotations

import asyncio
from pathlib import Path

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from exporters.forward.client import Settings, classify, post
from runtime import httppost
from runtime.retry import Failed, Retry, Sent
from storage.outbox import Row
from tests.support.smtp import self_signed_cert
from tests.support.tls_server import serving_tls


def test_statuses() -> None:
    assert isinstance(classify(200, {}, b"", "errors"), Sent)
    assert isinstance(classify(202, {}, b"", "traces"), Sent)
    for code in (429, 502, 503, 504):
        outcome = classify(code, {"Retry-After": "2"}, b"", "traces")
        assert isinstance(outcome, Retry) and outcome.after_s == 2.0
    assert classify(503, {}, b"", "traces") == Retry(None, "http_503")
    for code in (400, 401, 403, 404, 413, 415, 500, 501):
        outcome = classify(code, {"Retry-After": "2"}, b"", "errors")
        assert outcome == Failed(f"http_{code}")


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


def test_a_row_to_an_untrusted_certificate_stays_queued(tmp_path: Path) -> None:
    """Unlike an alert (which fails), an acknowledged row is never dropped for a
    setting that can still be fixed: retried, counted as a connection error."""
    cert, key = self_signed_cert(tmp_path)
    row = Row(1, "errors", b"{}", "application/json", "", 1, 0, 0)

    async def send(url: str, settings: Settings) -> object:
        client = httppost.new_client()
        try:
            return await post(client, url, row, settings)
        finally:
            client.close()
    with serving_tls(cert, key) as url:
        untrusted = asyncio.run(send(url, Settings({}, 5.0)))
        trusted = asyncio.run(send(url, Settings({}, 5.0, httppost.TLS(ca_file=str(cert)))))
    assert untrusted == Retry(None, "connection")
    assert trusted == Sent()
