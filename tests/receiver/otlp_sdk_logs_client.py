"""A real OpenTelemetry Python SDK application sending logs, run as a subprocess by
the tests so that the OTEL_EXPORTER_OTLP_* environment applies exactly as it would
in a user's process. Usage: `python otlp_sdk_logs_client.py http|grpc`.

The standard pipeline: Python's `logging` through the SDK's LoggingHandler, a
LoggerProvider, a BatchLogRecordProcessor and the OTLP log exporter configured from
the environment alone; and one record emitted through the Logs API with a map body
and an event name. It prints on stdout one JSON object: the export results and the
records as sent (in the shape storage/queries/logs.py reads them back).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

from opentelemetry._logs import SeverityNumber
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler, ReadableLogRecord
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    InMemoryLogRecordExporter,
    LogRecordExporter,
    LogRecordExportResult,
    SimpleLogRecordProcessor,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider


class Recording(LogRecordExporter):
    """The OTLP exporter, with each export's result kept for the report."""

    def __init__(self, inner: LogRecordExporter) -> None:
        self.inner = inner
        self.results: list[str] = []

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        result = self.inner.export(batch)
        self.results.append(result.name)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def exporter_for(protocol: str) -> LogRecordExporter:
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
    else:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import (  # type: ignore
            OTLPLogExporter,
        )
    return OTLPLogExporter()  # type: ignore[no-any-return]


def record(provider: LoggerProvider) -> None:
    handler = LoggingHandler(level=logging.DEBUG, logger_provider=provider)
    log = logging.getLogger("shop.orders")
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    tracer = TracerProvider().get_tracer("shop")
    with tracer.start_as_current_span("GET /orders/{id}"):
        log.info("order %s placed", 42, extra={
            "order.id": 42, "a.float": 3.25, "a.bool": True, "a.strings": ["x", "y"],
            "a.string": "naïve ✓"})
    log.warning("stock low: %d left", 3)
    log.debug("a debug line")
    events = provider.get_logger("shop.events", "2.0")
    events.emit(body={"order": {"id": 42, "items": ["a", "b"]}, "total": 12.5, "paid": False},
                severity_number=SeverityNumber.INFO2, severity_text="INFO2",
                event_name="order.summary", attributes={"channel": "web"},
                timestamp=1_795_168_800_000_000_123)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def describe(readable: ReadableLogRecord) -> dict[str, Any]:
    r = readable.log_record
    resource = {k: _plain(v) for k, v in readable.resource.attributes.items()}
    return {
        "time_ns": r.timestamp or r.observed_timestamp,
        "observed_ns": r.observed_timestamp,
        "severity_number": r.severity_number.value if r.severity_number else 0,
        "severity_text": r.severity_text or "",
        "body": _plain(r.body),
        "attributes": {k: _plain(v) for k, v in (r.attributes or {}).items()},
        "resource": resource,
        "service_name": resource["service.name"],
        "scope_name": readable.instrumentation_scope.name if readable.instrumentation_scope
        else "",
        "trace_id": f"{r.trace_id:032x}" if r.trace_id else "",
        "span_id": f"{r.span_id:016x}" if r.span_id else "",
        "flags": int(r.trace_flags or 0),
        "event_name": r.event_name or "",
        "dropped_attributes_count": readable.dropped_attributes,
    }


def main(protocol: str) -> int:
    provider = LoggerProvider(resource=Resource.create({
        "service.name": "shop-logs", "service.version": "1.4.2",
        "deployment.environment.name": "test", "host.cpus": 4}))
    memory = InMemoryLogRecordExporter()
    provider.add_log_record_processor(SimpleLogRecordProcessor(memory))
    recording = Recording(exporter_for(protocol))
    provider.add_log_record_processor(BatchLogRecordProcessor(recording))
    record(provider)
    provider.shutdown()  # flushes the batch processor: one export of every record
    print(json.dumps({"results": recording.results,
                      "logs": [describe(r) for r in memory.get_finished_logs()]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
