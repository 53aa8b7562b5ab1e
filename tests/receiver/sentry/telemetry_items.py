"""`log` and `trace_metric` items as the real SDKs send them: sentry-sdk 3.0.1's
(`sentry_sdk.logger.info("order {order} shipped", order=42)`, a `logging` warning
through LoggingIntegration, `sentry_sdk.metrics.count/gauge/distribution`, inside a
span) and @sentry/node 11.12.0's (`Sentry.logger.info(Sentry.logger.fmt...)` with
`enableLogs: true`), as a Transport printing its envelopes showed them. Only the
thread and process attributes that vary by run are left out."""

from __future__ import annotations

from typing import Any

TRACE_ID = "afc6e75c3ece491daa718e4aa5b46b25"
SPAN_ID = "9a4913211518a29a"
NODE_TRACE_ID = "a48889f33531440c91f18c1d681e2e54"
NODE_SPAN_ID = "96a65885fae07b1a"
TS = 1796692267.8848896


def typed(**values: Any) -> dict[str, dict[str, Any]]:
    """Attributes in Sentry's typed form; names with dots are passed as a dict."""
    out = {}
    for name, value in values.items():
        kind = ("boolean" if isinstance(value, bool) else "integer" if isinstance(value, int)
                else "double" if isinstance(value, float) else "array"
                if isinstance(value, list) else "string")
        out[name] = {"value": value, "type": kind}
    return out


def _python_sdk(**more: Any) -> dict[str, dict[str, Any]]:
    return typed(**more, **{
        "sentry.sdk.name": "sentry.python.flask", "sentry.sdk.version": "3.0.1",
        "process.runtime.name": "CPython", "process.runtime.version": "3.11.7",
        "server.address": "vm", "sentry.environment": "staging",
        "sentry.release": "shop@1.2"})


PYTHON_LOGS: dict[str, Any] = {"version": 2, "items": [
    {"timestamp": TS, "level": "info", "body": "order 42 shipped",
     "attributes": _python_sdk(**{
         "sentry.message.parameter.order": 42,
         "sentry.message.template": "order {order} shipped",
         "sentry.severity_number": 9, "sentry.severity_text": "info"}),
     "trace_id": TRACE_ID, "span_id": SPAN_ID},
    {"timestamp": TS + 0.0005, "level": "warn", "body": "stock low for sku-1",
     "attributes": _python_sdk(**{
         "sentry.origin": "auto.log.stdlib", "sentry.message.parameter.0": "sku-1",
         "sentry.message.template": "stock low for %s", "code.line.number": 22,
         "code.file.path": "/srv/shop/app.py", "code.function.name": "<module>",
         "logger.name": "shop", "sentry.severity_number": 13,
         "sentry.severity_text": "warn"}),
     "trace_id": TRACE_ID, "span_id": SPAN_ID}]}

NODE_LOGS: dict[str, Any] = {"version": 2, "items": [
    {"timestamp": 1796692276.2068875, "level": "info", "body": "order 42 shipped",
     "trace_id": NODE_TRACE_ID, "severity_number": 9,
     "attributes": typed(**{
         "region": "eu", "sentry.release": "r@1", "sentry.environment": "staging",
         "sentry.sdk.name": "sentry.javascript.node", "sentry.sdk.version": "11.12.0",
         "sentry.message.template": "order %s shipped", "sentry.message.parameter.0": 42,
         "sentry.trace.parent_span_id": NODE_SPAN_ID, "server.address": "vm",
         "sentry.timestamp.sequence": 0})}]}

PYTHON_METRICS: dict[str, Any] = {"version": 2, "items": [
    {"timestamp": TS, "name": "orders.shipped", "type": "counter", "value": 1.0,
     "attributes": _python_sdk(region="eu"), "trace_id": TRACE_ID, "span_id": SPAN_ID},
    {"timestamp": TS + 0.001, "name": "queue.depth", "type": "gauge", "value": 7.0,
     "attributes": _python_sdk(), "trace_id": TRACE_ID, "span_id": SPAN_ID, "unit": "item"},
    {"timestamp": TS + 0.002, "name": "checkout.ms", "type": "distribution", "value": 187.5,
     "attributes": _python_sdk(), "trace_id": TRACE_ID, "span_id": SPAN_ID,
     "unit": "millisecond"}]}

NODE_METRICS: dict[str, Any] = {"version": 2, "items": [
    {"timestamp": 1796692276.2284417, "trace_id": NODE_TRACE_ID, "span_id": NODE_SPAN_ID,
     "name": "orders", "type": "counter", "value": 2,
     "attributes": typed(**{
         "server.address": "vm", "sentry.release": "r@1", "sentry.environment": "staging",
         "sentry.sdk.name": "sentry.javascript.node", "sentry.sdk.version": "11.12.0",
         "sentry.timestamp.sequence": 0})}]}

# The item headers each SDK sends (item_count is the records' count).
LOG_HEADERS = {"content_type": "application/vnd.sentry.items.log+json"}
METRIC_HEADERS = {"content_type": "application/vnd.sentry.items.trace-metric+json"}
