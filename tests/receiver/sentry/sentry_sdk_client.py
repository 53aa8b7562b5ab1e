"""A real application reporting through Python's sentry-sdk, run as a subprocess by
the tests so that the SDK's global state (its client, its logging and excepthook
integrations) never touches the test process. Usage: `python sentry_sdk_client.py`.

The SDK's transport is replaced by one that records each envelope's `event` items
as the SDK serialised them: those are the payloads an SDK sends, unchanged. It
reports a chained exception raised in a function, a message, a logged error with
parameters and an exception with its own fingerprint; the chained exception is
also recorded on a span by the OpenTelemetry SDK (InMemorySpanExporter), so that a
test can compare the two doors' grouping of one exception. Prints one JSON object:
{"events": [...], "otel_exception": {attributes of the span's exception event}}.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import sentry_sdk
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport

EVENTS: list[dict[str, Any]] = []


class RecordingTransport(Transport):
    def capture_envelope(self, envelope: Envelope) -> None:
        for item in envelope.items:
            if item.type == "event" and item.payload.json is not None:
                EVENTS.append(item.payload.json)


def find_order(orders: dict[str, Any], order_id: str) -> Any:
    return orders[order_id]


def load_order(order_id: str) -> Any:
    try:
        return find_order({}, order_id)
    except KeyError as exc:
        raise LookupError(f"order {order_id} not found") from exc


def main() -> None:
    sentry_sdk.init(dsn="http://0123456789abcdef0123456789abcdef@localhost:3000/7",
                    transport=RecordingTransport, release="shop@2.1.0",
                    environment="production", server_name="web-1")
    sentry_sdk.set_user({"id": "user-42", "email": "ada@example.com"})
    sentry_sdk.set_tag("service", "orders")
    sentry_sdk.set_extra("cart", {"items": 3})

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("shop")
    with tracer.start_as_current_span("load order", record_exception=False,
                                      set_status_on_exception=False) as span:
        try:
            load_order("42")
        except LookupError as exc:
            sentry_sdk.capture_exception(exc)
            span.record_exception(exc)
    sentry_sdk.capture_message("cache warmed")
    logging.getLogger("shop.payments").error("payment %s declined", "p-7")
    with sentry_sdk.new_scope() as scope:
        scope.fingerprint = ["{{ default }}", "payments"]
        try:
            find_order({}, "99")
        except KeyError as exc:
            sentry_sdk.capture_exception(exc)
    sentry_sdk.flush()
    event = exporter.get_finished_spans()[0].events[0]
    print(json.dumps({"events": EVENTS, "otel_exception": dict(event.attributes or {})}))


if __name__ == "__main__":
    main()
