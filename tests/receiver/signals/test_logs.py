"""receiver/signals/logs.py, decoding on the event loop (tests/receiver/
test_otlp_logs_http.py covers the decode workers through the real server)."""

from __future__ import annotations

import pytest
from opentelemetry.proto.logs.v1 import logs_pb2

from model.errors import InvalidInput
from receiver.signals.logs import handle_logs
from receiver.signals.otlp import OtlpBody
from receiver.signals.outcome import Origin
from tests.receiver.otlp.test_decode_logs import request_of
from tests.receiver.signals.collect import run


def test_records_dropped_alone_are_a_partial_success() -> None:
    body = request_of(logs_pb2.LogRecord(severity_text="kept"),
                      logs_pb2.LogRecord(trace_id=b"short")).SerializeToString()
    outcome, (batch,) = run(handle_logs, OtlpBody(body, protobuf=True), Origin(3, len(body)))
    assert (outcome.batch, outcome.dropped) == (None, 1)
    assert outcome.reasons == ("resourceLogs[0].scopeLogs[0].logRecords[1]: "
                               "traceId must be empty or 16 bytes",)
    assert [r.severity_text for r in batch.logs] == ["kept"]
    assert (batch.project_id, batch.approx_bytes) == (3, len(body))
    assert batch.logs[0].observed_ns > 1_700_000_000 * 10**9  # the time received


def test_a_request_whose_every_record_is_dropped_is_invalid() -> None:
    body = request_of(logs_pb2.LogRecord(trace_id=b"short")).SerializeToString()
    with pytest.raises(InvalidInput) as caught:
        run(handle_logs, OtlpBody(body, protobuf=True))
    assert caught.value.message == "no log record in the request could be kept"
    assert caught.value.details == [{"field": "resourceLogs[0].scopeLogs[0].logRecords[0]",
                                     "error": "traceId must be empty or 16 bytes"}]


def test_otlp_json_is_decoded_too() -> None:
    body = b'{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"j"}}]}]}]}'
    outcome, (batch,) = run(handle_logs, OtlpBody(body, protobuf=False))
    assert outcome.dropped == 0
    assert [r.body for r in batch.logs] == ["j"]
