"""Records turned back into OTLP messages: a span into a `Span`, a log record into a
`LogRecord`. Both exporters that need the message use these: the SQL exporter's
stored bodies (storage/spanbody.py, storage/logbody.py) and the forward exporter's
upstream requests (exporters/forward/encode.py, encode_logs.py).

A record decoded from OTLP keeps the message it arrived in (`otlp`). That message is
copied as it is, so that what the record does not carry (links, trace state,
dropped counts, flags, whatever a later OTLP adds) is kept; its attributes and
events (a log record's: attributes and body) are written again from the record's
values only where a stage read them and may have changed them, or where there was
no message (OTLP/JSON, Sentry, a processor's record).

`depth` is how deep the message sits in what is serialised: 1 for a message stored
alone, 4 inside an export request (request, resource, scope, record). Values nested
deeper than protobuf reads back are refused with ValueError (model/otlp_values.py).
"""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from model.otlp_values import fill_any_value, fill_key_values
from model.records import LogRecord, Span

ALONE = 1  # a message serialised by itself
IN_REQUEST = 4  # ExportTraceServiceRequest, ResourceSpans, ScopeSpans, Span (logs alike)


def _copied(out: Any, record: Span | LogRecord, values: tuple[str, ...]) -> bool:
    """Copy into `out` the message `record` arrived in, if any; True when the fields
    `values` are to be written from the record's values (cleared of the copy's)."""
    if record.otlp is None:
        return True
    out.CopyFrom(record.otlp)
    if record.untouched:
        return False
    for name in values:
        out.ClearField(name)
    return True


def fill_span(out: trace_pb2.Span, span: Span, depth: int = ALONE) -> None:
    """`out` (empty) becomes the span's message, its columns aside (span_columns).
    Links are written from the record only when it has no message or a stage read
    them (`span.links` then holds them): most touched spans keep the copy's."""
    links_read = not span.links_unread
    if not _copied(out, span, ("attributes", "events", "links") if links_read
                   else ("attributes", "events")):
        return
    # Span, KeyValue, AnyValue; an event's: Span, Event, KeyValue, AnyValue.
    fill_key_values(out.attributes, span.attributes, depth + 2)
    for event in span.events:
        added = out.events.add()
        added.name = str(event.get("name") or "")
        added.time_unix_nano = int(event.get("time_unix_nano") or 0)
        fill_key_values(added.attributes, event.get("attributes") or {}, depth + 3)
    if links_read:
        for link in span.links:  # a link's attributes sit as an event's do
            _fill_link(out.links.add(), link, depth + 3)


def _fill_link(out: trace_pb2.Span.Link, link: dict[str, Any], depth: int) -> None:
    out.trace_id = bytes.fromhex(link.get("trace_id") or "")
    out.span_id = bytes.fromhex(link.get("span_id") or "")
    out.trace_state = str(link.get("trace_state") or "")
    out.flags = int(link.get("flags") or 0)
    fill_key_values(out.attributes, link.get("attributes") or {}, depth)


def span_columns(out: trace_pb2.Span, span: Span) -> None:
    """The span's columns (ids, name, kind, times, status) over what the message said,
    since a stage may have renamed the span. Each only where it differs, so that an
    unchanged span stays the bytes it came as."""
    _id_over(out, "trace_id", span.trace_id, 16)
    _id_over(out, "span_id", span.span_id, 8)
    _id_over(out, "parent_span_id", span.parent_span_id, 8)
    _over(out, span, _SPAN_COLUMNS)
    _over(out.status, span, _STATUS_COLUMNS)


def fill_log(out: logs_pb2.LogRecord, record: LogRecord, depth: int = ALONE) -> None:
    """`out` (empty) becomes the record's message, its columns aside (log_columns)."""
    if not _copied(out, record, ("attributes", "body")):
        return
    # LogRecord, KeyValue, AnyValue for an attribute; LogRecord, AnyValue for the body.
    fill_key_values(out.attributes, record.attributes, depth + 2)
    if record.body is not None:
        fill_any_value(out.body, record.body, depth + 1)


def log_columns(out: logs_pb2.LogRecord, record: LogRecord) -> None:
    """The record's columns (times, severity, ids, flags, event name) over what the
    message said, each only where it differs. An observed time the sender left unset
    stays unset (the decoder put the time of receipt in the record): a record sent
    again must be the same bytes, where its key is a hash of them."""
    _id_over(out, "trace_id", record.trace_id, 16)
    _id_over(out, "span_id", record.span_id, 8)
    _over(out, record, _LOG_COLUMNS)
    if out.observed_time_unix_nano != record.observed_ns and (
            record.otlp is None or record.otlp.observed_time_unix_nano):
        out.observed_time_unix_nano = record.observed_ns


# (message field, record attribute): the columns written over a message.
_SPAN_COLUMNS = (("name", "name"), ("kind", "kind"), ("start_time_unix_nano", "start_ns"),
                 ("end_time_unix_nano", "end_ns"))
_STATUS_COLUMNS = (("code", "status_code"), ("message", "status_message"))
_LOG_COLUMNS = (("time_unix_nano", "time_ns"), ("severity_number", "severity_number"),
                ("severity_text", "severity_text"), ("flags", "flags"),
                ("event_name", "event_name"))


def _over(out: Any, record: Any, columns: tuple[tuple[str, str], ...]) -> None:
    for field, attribute in columns:
        value = getattr(record, attribute)
        if getattr(out, field) != value:
            setattr(out, field, value)


def _id_over(out: Any, field: str, hex_id: str, width: int) -> None:
    """An id ("" when unset) over the message's, where it differs; an unset id leaves
    the all-zero one a sender wrote (which means unset too) as it was sent."""
    value = bytes.fromhex(hex_id) if hex_id else b""
    current = getattr(out, field)
    if current != value and (value or current != bytes(width)):
        setattr(out, field, value)
