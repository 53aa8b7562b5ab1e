"""Records turned back into OTLP messages (model/otlp_encode.py): the one encoder
the stored bodies and the forwarded requests share."""

from __future__ import annotations

import pytest
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from model.otlp_encode import (
    ALONE,
    IN_REQUEST,
    fill_log,
    fill_span,
    log_columns,
    span_columns,
)
from model.otlp_values import MAX_MESSAGE_DEPTH, attributes_of
from model.records import LogRecord, Span

TRACE, SPAN = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


def _span(otlp: trace_pb2.Span | None = None, **attributes: object) -> Span:
    return Span(TRACE, SPAN, "", "GET /", 2, 1, 2, 0, "", "shop", "scope", {},
                attributes=dict(attributes),
                events=[{"name": "e", "time_unix_nano": 5, "attributes": {"k": 1}}],
                otlp=otlp)


def _nested(levels: int) -> object:
    value: object = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def test_a_span_without_a_message_is_written_from_its_values() -> None:
    out = trace_pb2.Span()
    fill_span(out, _span(**{"http.route": "/"}))
    assert attributes_of(out.attributes) == {"http.route": "/"}
    assert [(e.name, e.time_unix_nano, attributes_of(e.attributes)) for e in out.events] == [
        ("e", 5, {"k": 1})]
    assert out.name == ""  # the columns are span_columns' to write
    span_columns(out, _span())
    assert (out.name, out.kind, out.trace_id.hex()) == ("GET /", 2, TRACE)


def test_a_touched_span_keeps_what_the_record_does_not_carry() -> None:
    message = trace_pb2.Span(trace_state="vendor=1", dropped_attributes_count=3)
    message.links.add(trace_id=bytes(16))
    span = _span(message, changed=True)
    out = trace_pb2.Span()
    fill_span(out, span)
    assert out.trace_state == "vendor=1" and out.dropped_attributes_count == 3
    assert len(out.links) == 1 and attributes_of(out.attributes) == {"changed": True}


def test_the_depth_bound_counts_from_where_the_message_sits() -> None:
    # Alone, a span's attribute value sits at depth 3; in a request at 6. A value
    # just within the bound alone is past it in a request.
    levels = (MAX_MESSAGE_DEPTH - (ALONE + 2)) // 2
    fill_span(trace_pb2.Span(), _span(deep=_nested(levels)), ALONE)
    with pytest.raises(ValueError):
        fill_span(trace_pb2.Span(), _span(deep=_nested(levels)), IN_REQUEST)


def test_a_log_record_without_a_message_gets_its_columns() -> None:
    record = LogRecord(10, 11, 9, "INFO", TRACE, SPAN, 1, "ev", "shop", "scope", {},
                       attributes={"k": "v"}, body={"a": [1, 2]})
    out = logs_pb2.LogRecord()
    fill_log(out, record)
    log_columns(out, record)
    assert (out.time_unix_nano, out.observed_time_unix_nano, out.severity_number,
            out.severity_text, out.flags, out.event_name) == (10, 11, 9, "INFO", 1, "ev")
    assert (out.trace_id.hex(), out.span_id.hex()) == (TRACE, SPAN)
    assert attributes_of(out.attributes) == {"k": "v"}
    assert out.body.kvlist_value.values[0].key == "a"


def test_an_observed_time_the_sender_left_unset_stays_unset() -> None:
    message = logs_pb2.LogRecord(time_unix_nano=10)
    record = LogRecord(10, 99, 0, "", "", "", 0, "", "shop", "scope", {}, otlp=message)
    out = logs_pb2.LogRecord()
    fill_log(out, record, IN_REQUEST)
    log_columns(out, record)
    assert out.observed_time_unix_nano == 0
    assert out.SerializeToString() == message.SerializeToString()
