"""receiver/signals/traces.py, decoding on the event loop (tests/sounding/
test_offload.py covers the decode workers)."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from model.errors import InvalidInput
from receiver.signals.outcome import Origin
from receiver.signals.traces import OtlpBody, handle_traces
from tests.receiver.signals.collect import run

GOOD_TRACE = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")


def request(*trace_ids: bytes) -> bytes:
    message = ExportTraceServiceRequest()
    spans = message.resource_spans.add().scope_spans.add().spans
    for index, trace_id in enumerate(trace_ids):
        spans.add(trace_id=trace_id, span_id=bytes([index + 1]) * 8, name=f"s{index}",
                  start_time_unix_nano=1, end_time_unix_nano=2)
    return message.SerializeToString()


def test_spans_dropped_alone_are_a_partial_success() -> None:
    body = request(GOOD_TRACE, b"short")
    outcome, (batch,) = run(handle_traces, OtlpBody(body, protobuf=True), Origin(3, len(body)))
    assert (outcome.batch, outcome.dropped) == (None, 1)
    assert outcome.reasons == ("resourceSpans[0].scopeSpans[0].spans[1]: "
                               "traceId must be 16 bytes, not all zero",)
    assert [s.name for s in batch.spans] == ["s0"]
    assert (batch.project_id, batch.approx_bytes) == (3, len(body))


def test_a_request_whose_every_span_is_dropped_is_invalid() -> None:
    with pytest.raises(InvalidInput):
        run(handle_traces, OtlpBody(request(b"short"), protobuf=True))


def test_otlp_json_is_decoded_too() -> None:
    body = (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"%s","spanId":'
            b'"0102030405060708","name":"j","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}'
            % GOOD_TRACE.hex().encode())
    outcome, (batch,) = run(handle_traces, OtlpBody(body, protobuf=False))
    assert outcome.dropped == 0
    assert [s.name for s in batch.spans] == ["j"]
