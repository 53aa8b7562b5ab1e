"""Log records as the OTLP request that carries them upstream: one
ExportLogsServiceRequest, grouped by resource and scope, built as spans are
(exporters/forward/encode.py): a record no stage looked into is copied from the
message it arrived in, and its columns (times, severity, ids, flags, event name) are
written over it."""

from __future__ import annotations

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1 import logs_pb2

from exporters.forward.otlp_groups import ScopeGroups
from sounding.otlp_values import fill_any_value, fill_key_values
from sounding.records import LogRecord


def _fill_log(out: logs_pb2.LogRecord, record: LogRecord) -> None:
    if record.otlp is not None:
        out.CopyFrom(record.otlp)
    if record.otlp is None or not record.untouched:
        # A stage read (and may have changed) attributes or body: send its values.
        out.ClearField("attributes")
        out.ClearField("body")
        fill_key_values(out.attributes, record.attributes, depth=6)
        if record.body is not None:
            fill_any_value(out.body, record.body, depth=5)
    # The columns, over what the message said, each only where it differs. An
    # observed time the sender left unset stays unset (the decoder put the time of
    # receipt in the record): a retried request must be the same bytes upstream, where
    # the record's key is a hash of them.
    trace_id = bytes.fromhex(record.trace_id) if record.trace_id else b""
    span_id = bytes.fromhex(record.span_id) if record.span_id else b""
    if out.trace_id != trace_id and (trace_id or out.trace_id != bytes(16)):
        out.trace_id = trace_id
    if out.span_id != span_id and (span_id or out.span_id != bytes(8)):
        out.span_id = span_id
    if out.time_unix_nano != record.time_ns:
        out.time_unix_nano = record.time_ns
    if out.observed_time_unix_nano != record.observed_ns and (
            record.otlp is None or record.otlp.observed_time_unix_nano):
        out.observed_time_unix_nano = record.observed_ns
    if out.severity_number != record.severity_number:
        out.severity_number = record.severity_number  # type: ignore[assignment]
    if out.severity_text != record.severity_text:
        out.severity_text = record.severity_text
    if out.flags != record.flags:
        out.flags = record.flags
    if out.event_name != record.event_name:
        out.event_name = record.event_name


def encode_logs(records: list[LogRecord]) -> tuple[ExportLogsServiceRequest, int]:
    """(the request, records that could not be encoded)."""
    request = ExportLogsServiceRequest()
    groups = ScopeGroups(request.resource_logs, "scope_logs")
    failed = 0
    for record in records:
        scope_logs = groups.scope_of(record)
        try:
            _fill_log(scope_logs.log_records.add(), record)
        except (ValueError, TypeError):  # nested past what protobuf reads, a bad id or type
            del scope_logs.log_records[-1]
            failed += 1
    return request, failed
