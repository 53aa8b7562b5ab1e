"""A Sentry transaction (a `transaction` item) becomes spans. Pure: a parsed JSON
object in, records out.

The transaction is the root span: its ids, op, status and data are in
`contexts.trace`, its name is `transaction`, its times `start_timestamp` and
`timestamp`. Each of `spans[]` is a child span, in the same trace. Sentry normalises
what an SDK sends instead of refusing it, so nothing here raises for a field: a value
that cannot be read is left out, and a span without valid ids or times is dropped
alone, counted with its reason in the returned DecodedSpans (as the OTLP decoders
count theirs), the rest kept.
"""

from __future__ import annotations

from typing import Any

from model.records import Span
from receiver.otlp.decode_traces import DecodedSpans
from receiver.otlp.json_rules import Drop
from receiver.sentry.span_attributes import (
    MAX_NAME,
    MAX_SPANS,
    ROUTE_SOURCES,
    SCOPE,
    SERVER,
    Attributes,
    add_semantics,
    drop_beyond_limit,
    http_status_of,
    kind_of,
    route_of,
    span_times_ns,
    status_of,
)
from receiver.sentry.values import hex_id, service_of, tags_of, text

UNLABELED = "<unlabeled transaction>"  # what Sentry calls a transaction without a name


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _times_ns(obj: dict[str, Any]) -> tuple[int, int]:
    return span_times_ns(obj.get("start_timestamp"), obj.get("timestamp"), "timestamp")


def _resource(event: dict[str, Any], service: str) -> dict[str, Any]:
    sdk = _dict(event.get("sdk"))
    found = {
        "service.name": service,
        "deployment.environment.name": text(event.get("environment")),
        "service.version": text(event.get("release")),
        "telemetry.sdk.name": text(sdk.get("name")),
        "telemetry.sdk.version": text(sdk.get("version")),
        "host.name": text(event.get("server_name")),
    }
    return {key: value for key, value in found.items() if value is not None}


def _sentry_attributes(attributes: Attributes, obj: dict[str, Any], op: str | None,
                       description: str | None) -> None:
    attributes.put("sentry.op", op)
    attributes.put("sentry.description", description)
    attributes.put("sentry.origin", text(obj.get("origin")))


def _root(event: dict[str, Any], trace: dict[str, Any], tags: dict[str, str],
          service: str, resource: dict[str, Any]) -> Span:
    trace_id = hex_id(trace.get("trace_id"), 32)
    span_id = hex_id(trace.get("span_id"), 16)
    if trace_id is None or span_id is None:
        raise Drop("contexts.trace needs a trace_id (32 hex) and a span_id (16 hex)")
    start_ns, end_ns = _times_ns(event)
    op = text(trace.get("op"), MAX_NAME)
    description = text(trace.get("description"), MAX_NAME)
    name = text(event.get("transaction"), MAX_NAME) or description or op or UNLABELED
    data = _dict(trace.get("data"))
    contexts = _dict(event.get("contexts"))
    request = _dict(event.get("request"))
    source = text(_dict(event.get("transaction_info")).get("source"))
    http_status = http_status_of(_dict(contexts.get("response")).get("status_code"),
                                 data.get("http.response.status_code"),
                                 data.get("http.status_code"), tags.get("http.status_code"))
    kind = kind_of(op, data)
    status_code, status_message = status_of(trace.get("status"), http_status)

    attributes = Attributes()
    _sentry_attributes(attributes, trace, op, description)
    attributes.put("sentry.source", source)
    attributes.put_all(data)
    attributes.put_all(tags)
    if kind == SERVER:
        # What processors/classify.py and spanmetrics read to make the transaction a
        # request on the performance page, as an OpenTelemetry server span is.
        if not ({"http.request.method", "http.method"} & attributes.values.keys()):
            method = text(request.get("method"), 16)
            attributes.put("http.request.method", method.upper() if method else None)
        if not ({"url.full", "http.url"} & attributes.values.keys()):
            attributes.put("url.full", text(request.get("url"), 8192))
        if source in ROUTE_SOURCES:
            attributes.put("http.route", route_of(name))
        if not ({"http.response.status_code", "http.status_code"}
                & attributes.values.keys()):
            attributes.put("http.response.status_code", http_status)
    for key, measurement in _dict(event.get("measurements")).items():
        attributes.put(f"sentry.measurements.{key}", _dict(measurement).get("value"))
    add_semantics(attributes, op, description)
    parent = hex_id(trace.get("parent_span_id"), 16) or ""
    return Span(trace_id, span_id, parent, name, kind, start_ns, end_ns, status_code,
                status_message, service, SCOPE, resource, attributes.values, [])


def _child(span: Any, trace_id: str | None, root_id: str | None, service: str,
           resource: dict[str, Any]) -> Span:
    if not isinstance(span, dict):
        raise Drop("a span must be an object")
    span_id = hex_id(span.get("span_id"), 16)
    if span_id is None:
        raise Drop("span_id must be 16 hexadecimal characters")
    own_trace = span.get("trace_id")
    # A span without a trace id is in its transaction's trace.
    trace_id = trace_id if own_trace is None else hex_id(own_trace, 32)
    if trace_id is None:
        raise Drop("trace_id must be 32 hexadecimal characters")
    start_ns, end_ns = _times_ns(span)
    op = text(span.get("op"), MAX_NAME)
    description = text(span.get("description"), MAX_NAME)
    data = _dict(span.get("data"))
    tags = tags_of(span)
    http_status = http_status_of(data.get("http.response.status_code"),
                                 data.get("http.status_code"), tags.get("http.status_code"))
    status_code, status_message = status_of(span.get("status"), http_status)

    attributes = Attributes()
    _sentry_attributes(attributes, span, op, description)
    attributes.put_all(data)
    attributes.put_all(tags)
    add_semantics(attributes, op, description)
    # A span without a readable parent hangs under its transaction, as Sentry shows it.
    parent = hex_id(span.get("parent_span_id"), 16) or root_id or ""
    return Span(trace_id, span_id, parent, description or op or "", kind_of(op, data),
                start_ns, end_ns, status_code, status_message, service, SCOPE, resource,
                attributes.values, [])


def decode_transaction(event: dict[str, Any], now_us: int) -> DecodedSpans:
    """The spans of a transaction: the transaction itself first, then its children;
    those that could not be kept are counted in `dropped` with their reasons.
    `now_us` is not used: a span without its times is dropped rather than dated on
    arrival (it is there so that both Sentry decoders are called alike)."""
    out = DecodedSpans()
    if not isinstance(event, dict):
        out.drop("transaction", "must be an object")
        return out
    tags = tags_of(event)
    service = service_of(event, tags)
    resource = _resource(event, service)  # one dict: the store hashes it once
    trace = _dict(_dict(event.get("contexts")).get("trace"))
    try:
        out.spans.append(_root(event, trace, tags, service, resource))
    except Drop as exc:
        out.drop("transaction", str(exc))
    trace_id = hex_id(trace.get("trace_id"), 32)
    root_id = hex_id(trace.get("span_id"), 16)
    children = event.get("spans")
    if not isinstance(children, list):
        return out
    for index, child in enumerate(children[:MAX_SPANS]):
        try:
            out.spans.append(_child(child, trace_id, root_id, service, resource))
        except Drop as exc:
            out.drop(f"spans[{index}]", str(exc))
    drop_beyond_limit(out, len(children), "spans")
    return out
