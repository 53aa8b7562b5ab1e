"""A small application on the real OpenTelemetry Python SDK, run as a subprocess by
tests/dashboard/test_sdk_logs.py: a traces pipeline and a logs pipeline (Python's
`logging` through the SDK's LoggingHandler), both exporting over OTLP/HTTP protobuf
configured by the OTEL_EXPORTER_OTLP_* environment alone.

Inside a server span it logs a line, then, in a child span, catches an exception and
reports it with `logger.exception(...)` only (the span records no exception event).
It prints one JSON object on stdout: the ids of both spans and the export results.
"""

from __future__ import annotations

import json
import logging
import sys

from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind


class CardDeclined(Exception):
    pass


def main() -> int:
    resource = Resource.create({"service.name": "sdk-shop", "service.version": "3.1.4",
                                "deployment.environment.name": "staging"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter()))
    logger = logging.getLogger("shop.payments")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logger.addHandler(LoggingHandler(level=logging.INFO, logger_provider=logger_provider))

    tracer = tracer_provider.get_tracer("shop.payments")
    with tracer.start_as_current_span("POST /charge", kind=SpanKind.SERVER) as root:
        logger.info("charging order %s", 42, extra={"order.id": 42})
        with tracer.start_as_current_span("charge card", record_exception=False,
                                          set_status_on_exception=False) as child:
            try:
                raise CardDeclined("card 4242 declined")
            except CardDeclined:
                logger.exception("charge failed for order %s", 42)
    logger_provider.shutdown()
    tracer_provider.shutdown()
    print(json.dumps({
        "trace_id": f"{root.get_span_context().trace_id:032x}",
        "root_span_id": f"{root.get_span_context().span_id:016x}",
        "span_id": f"{child.get_span_context().span_id:016x}"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
