"""Sentry's streamed spans (a `span` item, content type
application/vnd.sentry.items.span.v2+json) become spans. Pure: a parsed JSON object
in, records out.

This is how @sentry/node 11 sends spans by default (`traceLifecycle: "stream"`):
no transaction, but batches of finished spans, `{"version": 2, "items": [...]}`,
each with its own trace_id, span_id, parent_span_id, name, status ("ok" or
"error"), is_segment, start_timestamp and end_timestamp (seconds), and typed
attributes, `{"sentry.op": {"type": "string", "value": "db.query"}}`. The segment
(what the transaction used to be) is one of them, flagged `is_segment`; its children
may come in this item or in another one, before or after it.

So each span is read from itself alone, and never from its segment: the SDK puts
what the transaction form kept on the transaction (release, environment, SDK, the
scope's attributes) on every span. Where the transaction decoder reads a field, the
stream has an attribute:

- the resource (service, release, environment, SDK) as receiver/sentry/resource.py
  reads it for logs and metrics too; those attributes become resource attributes
  only, not the span's too.
- the kind from `sentry.kind` (set by the SDK's OpenTelemetry layer), else from
  `sentry.op` as for a transaction's spans.
- the status: "ok" unset, "error" an error named by `sentry.status.message`; an
  HTTP status of 500 or more is an error too.
- a segment whose name is its route (`sentry.span.source`, or the segment's
  `sentry.segment.name.source`, is route or url) gives `http.route` when it is a
  server span, as a transaction does.

A span without a readable parent hangs under its segment (`sentry.segment.id`), as a
transaction's child hangs under the transaction. Links and attribute units are not
kept. Nothing here raises for a field: a span without valid ids or times is dropped
alone, counted with its reason in the returned DecodedSpans, the rest kept.
"""

from __future__ import annotations

from typing import Any

from model.records import Span
from receiver.otlp.decode_traces import DecodedSpans
from receiver.otlp.json_rules import Drop
from receiver.sentry.resource import ON_THE_RESOURCE, Resources, plain_attributes, resource_of
from receiver.sentry.span_attributes import (
    MAX_NAME,
    MAX_SPANS,
    MAX_STATUS_MESSAGE,
    ROUTE_SOURCES,
    SCOPE,
    SERVER,
    STATUS_ERROR,
    Attributes,
    add_semantics,
    drop_beyond_limit,
    http_status_of,
    kind_of,
    span_times_ns,
    status_of,
)
from receiver.sentry.values import hex_id, text


def _source(item: dict[str, Any], attributes: dict[str, Any]) -> str | None:
    source = text(attributes.get("sentry.span.source"))
    if source is None and item.get("is_segment") is True:
        source = text(attributes.get("sentry.segment.name.source"))
    return source


def _span(item: Any, known: Resources) -> Span:
    if not isinstance(item, dict):
        raise Drop("a span must be an object")
    trace_id = hex_id(item.get("trace_id"), 32)
    if trace_id is None:
        raise Drop("trace_id must be 32 hexadecimal characters")
    span_id = hex_id(item.get("span_id"), 16)
    if span_id is None:
        raise Drop("span_id must be 16 hexadecimal characters")
    start_ns, end_ns = span_times_ns(item.get("start_timestamp"),
                                     item.get("end_timestamp"), "end_timestamp")
    sent = plain_attributes(item.get("attributes"))
    resource = resource_of(sent, known)
    op = text(sent.get("sentry.op"), MAX_NAME)
    is_segment = item.get("is_segment") is True
    name = (text(item.get("name"), MAX_NAME)
            or (text(sent.get("sentry.segment.name"), MAX_NAME) if is_segment else None)
            or op or "")
    kind = kind_of(op, sent)
    http_status = http_status_of(sent.get("http.response.status_code"),
                                 sent.get("http.status_code"))
    status_code, status_message = status_of(item.get("status"), http_status)
    if status_code == STATUS_ERROR:
        status_message = (text(sent.get("sentry.status.message"), MAX_STATUS_MESSAGE)
                          or status_message)

    attributes = Attributes()
    attributes.put_all({k: v for k, v in sent.items() if k not in ON_THE_RESOURCE})
    if kind == SERVER and _source(item, sent) in ROUTE_SOURCES:
        attributes.put("http.route", name)
    add_semantics(attributes, op, name)
    parent = hex_id(item.get("parent_span_id"), 16)
    if parent is None and not is_segment:
        # Hangs under its segment, unless it is the segment (a segment's own id).
        segment = hex_id(sent.get("sentry.segment.id"), 16)
        parent = segment if segment != span_id else None
    return Span(trace_id, span_id, parent or "", name, kind, start_ns, end_ns, status_code,
                status_message, str(resource["service.name"]), SCOPE, resource,
                attributes.values, [])


def decode_span_items(payload: Any, now_us: int) -> DecodedSpans:
    """The spans of one `span` item, in the order sent; those that could not be kept
    are counted in `dropped` with their reasons (`items[i]: ...`). `now_us` is not
    used: a span without its times is dropped rather than dated on arrival (it is
    there so that the Sentry decoders are called alike)."""
    out = DecodedSpans()
    items = payload.get("items") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        out.drop("span", "the payload must be an object with an items list")
        return out
    known: Resources = {}  # spans alike share one resource dict
    for index, item in enumerate(items[:MAX_SPANS]):
        try:
            out.spans.append(_span(item, known))
        except Drop as exc:
            out.drop(f"items[{index}]", str(exc))
    drop_beyond_limit(out, len(items), "items")
    return out
