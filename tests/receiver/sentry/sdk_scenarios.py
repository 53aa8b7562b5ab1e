"""What an application does with the Sentry Python SDK, for sdk_app.py (run in its
subprocess, never imported by the tests): each scenario returns the event ids the
SDK gave and may report more about itself in INFO (ids of a trace, line numbers).

- `checkout`: a request through the SDK's WSGI middleware (so the event has its
  `request`), a user, a tag and a breadcrumb; a chained exception (`raise ... from`)
  raised in the app's functions, caught and captured with capture_exception.
- `messages`: capture_message at warning, and two logged errors of one template with
  different parameters (the logging integration: their `logentry`).
- `transaction`: a transaction with a child span and a grandchild, an exception
  captured inside it.
- `exceptions`: EXCEPTIONS distinct exceptions of one kind (one per event id).
- `both_doors`: two exceptions, each captured by sentry-sdk and recorded on a span
  of the OpenTelemetry SDK, exported by its OTLP/HTTP exporter (configured from the
  OTEL_EXPORTER_OTLP_* environment): one raised in the app's function, one raised
  inside the standard library (json.loads) called from it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any
from wsgiref.util import setup_testing_defaults

import sentry_sdk
from sentry_sdk.integrations import Integration
from sentry_sdk.integrations.logging import LoggingIntegration
from sentry_sdk.integrations.wsgi import SentryWsgiMiddleware

INFO: dict[str, Any] = {}
EXCEPTIONS = 20
USER_AGENT = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/126.0.0.0 Safari/537.36")


def charge(order_id: int) -> None:
    raise ValueError(f"card of order {order_id} declined")


def parse_order(body: str) -> Any:
    return json.loads(body)  # raises in the standard library's json.decoder


def checkout(order_id: int) -> None:
    try:
        charge(order_id)
    except ValueError as exc:
        raise RuntimeError(f"checkout of order {order_id} failed") from exc


def checkout_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    sentry_sdk.set_user({"id": "user-42", "email": "ada@example.com"})
    sentry_sdk.set_tag("region", "eu-west")
    sentry_sdk.add_breadcrumb(category="cart", message="added sku-7", level="info")
    try:
        checkout(42)
    except RuntimeError:
        INFO["event_id"] = sentry_sdk.capture_exception()
    start_response("500 Internal Server Error", [("Content-Type", "text/plain")])
    return [b"failed"]


def run_checkout() -> list[str | None]:
    environ: dict[str, Any] = {"REQUEST_METHOD": "POST", "PATH_INFO": "/checkout",
                               "QUERY_STRING": "order=42", "HTTP_USER_AGENT": USER_AGENT,
                               "SERVER_NAME": "shop.example", "SERVER_PORT": "80"}
    setup_testing_defaults(environ)
    body = SentryWsgiMiddleware(checkout_app)(environ, lambda *args: None)
    list(body)
    return [INFO["event_id"]]


def run_messages() -> list[str | None]:
    ids = [sentry_sdk.capture_message("disk almost full", level="warning")]
    payments = logging.getLogger("shop.payments")
    for payment in ("p-7", "p-9"):
        payments.error("payment %s declined", payment)
    return ids


def run_transaction() -> list[str | None]:
    with sentry_sdk.start_transaction(op="http.server", name="GET /orders/{id}") as txn:
        with txn.start_child(op="db.query", description="SELECT * FROM orders") as db:
            with db.start_child(op="http.client", description="GET /prices") as prices:
                pass
        try:
            charge(7)
        except ValueError:
            event_id = sentry_sdk.capture_exception()
    INFO.update(trace_id=txn.trace_id, root=txn.span_id, db=db.span_id,
                prices=prices.span_id)
    return [event_id]


def run_exceptions() -> list[str | None]:
    ids = []
    for order in range(EXCEPTIONS):
        try:
            charge(order)
        except ValueError:
            ids.append(sentry_sdk.capture_exception())
    return ids


def run_both_doors() -> list[str | None]:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "shop"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    tracer = provider.get_tracer("shop")
    ids = []
    with tracer.start_as_current_span("POST /checkout", record_exception=False,
                                      set_status_on_exception=False) as span:
        for fails in (lambda: charge(42), lambda: parse_order("{")):
            try:
                fails()
            except ValueError as exc:
                ids.append(sentry_sdk.capture_exception(exc))
                span.record_exception(exc)
    provider.shutdown()
    return ids


SCENARIOS: dict[str, Callable[[], list[str | None]]] = {
    "checkout": run_checkout, "messages": run_messages, "transaction": run_transaction,
    "exceptions": run_exceptions, "both_doors": run_both_doors}
INTEGRATIONS: dict[str, Callable[[], list[Integration]]] = {
    "messages": lambda: [LoggingIntegration(level=None, event_level=logging.ERROR)]}
