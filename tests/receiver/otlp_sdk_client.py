"""A real OpenTelemetry Python SDK application, run as a subprocess by the tests so
that the OTEL_EXPORTER_OTLP_* environment applies exactly as it would in a user's
process. Usage: `python otlp_sdk_client.py http|grpc`.

It records a small trace (every span kind, attributes of every type the SDK
allows, an error status and a recorded exception), exports it once with the OTLP
exporter configured from the environment alone, and prints on stdout one JSON
object: the export result and the spans as sent (tests/receiver/otlp_helpers.py
reads the same shape back from the store).
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode


def record(provider: TracerProvider) -> None:
    tracer = provider.get_tracer("shop.orders", "2.1.0")
    with tracer.start_as_current_span("GET /orders/{id}", kind=SpanKind.SERVER, attributes={
            "http.request.method": "GET", "http.route": "/orders/{id}",
            "url.full": "http://shop.example/orders/42", "http.response.status_code": 500}):
        with tracer.start_as_current_span("SELECT orders", kind=SpanKind.CLIENT, attributes={
                "db.system.name": "postgresql",
                "db.query.text": "SELECT * FROM orders WHERE id = $1"}):
            pass
        with tracer.start_as_current_span("orders publish", kind=SpanKind.PRODUCER, attributes={
                "messaging.system": "kafka", "messaging.destination.name": "orders"}):
            pass
        with tracer.start_as_current_span("orders process", kind=SpanKind.CONSUMER):
            pass
        with tracer.start_as_current_span("price order", kind=SpanKind.INTERNAL, attributes={
                "a.string": "naïve ✓", "a.bool": True, "a.int": 2**62, "a.float": 3.25,
                "a.strings": ["x", "y"], "a.ints": [1, 2, 3], "a.floats": [0.5, 1.5],
                "a.bools": [True, False]}, record_exception=False,
                set_status_on_exception=False) as span:
            try:
                raise ValueError("order 42 not found")
            except ValueError as exc:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, "order 42 not found"))


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def describe(span: ReadableSpan) -> dict[str, Any]:
    context = span.get_span_context()
    assert context is not None and span.resource is not None
    return {
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_span_id": f"{span.parent.span_id:016x}" if span.parent else "",
        "name": span.name,
        "kind": span.kind.value + 1,  # the SDK counts from INTERNAL = 0, OTLP from 1
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "status_code": span.status.status_code.value,
        "status_message": span.status.description or "",
        "scope_name": span.instrumentation_scope.name if span.instrumentation_scope else "",
        "resource": {k: _plain(v) for k, v in span.resource.attributes.items()},
        "attributes": {k: _plain(v) for k, v in (span.attributes or {}).items()},
        "events": [{"name": e.name, "attributes": {k: _plain(v) for k, v in
                                                   (e.attributes or {}).items()}}
                   for e in span.events],
    }


def exporter_for(protocol: str) -> Any:
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore
            OTLPSpanExporter,
        )
    return OTLPSpanExporter()


def main(protocol: str) -> int:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({
        "service.name": "shop", "service.version": "1.4.2",
        "deployment.environment.name": "test", "host.cpus": 4}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    record(provider)
    spans = memory.get_finished_spans()
    exporter = exporter_for(protocol)
    try:
        result = exporter.export(spans)
    except Exception:  # noqa: BLE001 - reported to the test, which shows it
        result = None
        traceback.print_exc()
    finally:
        exporter.shutdown()
    print(json.dumps({"result": result.name if result is not None else "EXCEPTION",
                      "spans": [describe(s) for s in spans]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
