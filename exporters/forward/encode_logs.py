"""Log records as the OTLP request that carries them upstream: one
ExportLogsServiceRequest, grouped by resource and scope, built as spans are
(exporters/forward/encode.py): a record no stage looked into is copied from the
message it arrived in, and its columns (times, severity, ids, flags, event name) are
written over it."""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from exporters.forward.otlp_groups import ScopeGroups
from model.otlp_encode import IN_REQUEST, fill_log, log_columns
from model.records import LogRecord


def encode_logs(records: list[LogRecord]) -> tuple[ExportLogsServiceRequest, int]:
    """(the request, records that could not be encoded)."""
    request = ExportLogsServiceRequest()
    # Refused: values nested past what protobuf reads, a bad id or type.
    failed = ScopeGroups(request.resource_logs, "scope_logs").add_each(
        records, "log_records", _fill_log, (ValueError, TypeError))
    return request, failed


def _fill_log(out: Any, record: LogRecord) -> None:
    fill_log(out, record, IN_REQUEST)
    log_columns(out, record)
