"""Sentry's streamed spans (a `span` item, content type
application/vnd.sentry.items.span.v2+json) become spans. Pure: a parsed JSON object
in, records out.

This is how @sentry/node 11 sends spans by default (`traceLifecycle: "stream"`), and
sentry-sdk 3 (Python) always: no transaction, but batches of finished spans,
`{"version": 2, "items": [...]}`, each with its own trace_id, span_id,
parent_span_id, name, status, is_segment, start_timestamp and end_timestamp
(seconds), typed attributes, `{"sentry.op": {"type": "string", "value": "db"}}`
(typed_attributes.py), and links. The segment (what the transaction used to be) is one of
them, flagged `is_segment`; its children may come in this item or in another one,
before or after it.

So each span is read from itself alone, and never from its segment: the SDK puts
what the transaction form kept on the transaction (release, environment, SDK, the
scope's attributes) on every span. Where the transaction decoder reads a field, the
stream has an attribute:

- the resource (service, release, environment, SDK) as receiver/sentry/resource.py
  reads it for logs and metrics too; those attributes become resource attributes
  only, not the span's too. Typed attributes are read as
  receiver/sentry/typed_attributes.py says.
- the transaction: the segment's own `name`, as a transaction's root is named by
  `transaction`; so the trace list and the performance pages name it as they name a
  transaction. Both SDKs set every span's `sentry.segment.name` from the segment's
  name, the segment's own at its end (the same text), a child's when the child ended
  (sentry-sdk 3: before a framework may rename the segment, @sentry/node refreshes it
  at its flush): the segment's `name` is the one to trust, `sentry.segment.name` only
  names a segment that has none. A child keeps its `sentry.segment.name` attribute:
  which transaction it ran in.
- the kind from `sentry.kind` (set by the SDK's OpenTelemetry layer), else from
  `sentry.op` as for a transaction's spans.
- the status: the protocol has "ok" and "error"; Relay keeps any other text for what
  comes later. "ok" (and "unset") is OTLP's unset: the SDKs send "ok" for every span
  that did not fail, which is what unset means (OTLP's ok is a person's verdict).
  "error" is an error named by `sentry.status.message` (@sentry/node's
  `setStatus({code: 2, message})`), else "error"; another text is an error named by
  it, as a transaction's statuses (internal_error, not_found...) are. An HTTP status
  of 500 or more is an error too.
- a segment whose name is its route (`sentry.span.source`, or the segment's
  `sentry.segment.name.source`, is route or url) gives `http.route` when it is a
  server span, as a transaction does.
- the links (links_of), kept as an OTLP span's links are (Span.links): the trace page
  shows them.

A span without a readable parent hangs under its segment (`sentry.segment.id`), as a
transaction's child hangs under the transaction. Nothing here raises for a field: a
span without valid ids or times is dropped alone, counted with its reason in the
returned DecodedSpans, the rest kept.
"""

from __future__ import annotations

from typing import Any

from model.records import Span
from receiver.otlp.decode_traces import DecodedSpans
from receiver.otlp.json_rules import Drop
from receiver.sentry.resource import ON_THE_RESOURCE, Resources, resource_of
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
    http_status_of,
    kind_of,
    read_items,
    route_of,
    span_times_ns,
    status_of,
)
from receiver.sentry.typed_attributes import plain_attributes
from receiver.sentry.values import hex_id, text

MAX_LINKS = 128  # OpenTelemetry's SDKs keep 128 links a span by default





def links_of(raw: Any) -> list[dict[str, Any]]:
    """A span's `links` as Span.links holds them (model/records.py), stored as an OTLP
    span's links are: `trace_id` and `span_id` (a link without both readable is left
    out, as an attribute without a value is), `sampled` true as the W3C sampled flag
    (flags 1; false and unsaid are both 0, as OpenTelemetry has no "unknown"), and the
    typed `attributes` (sentry.link.type: "previous_trace" links a page load to the
    one before it). At most MAX_LINKS, as OpenTelemetry's SDKs keep."""
    if not isinstance(raw, list) or not raw:
        return []
    links = []
    for link in raw[:MAX_LINKS]:
        if not isinstance(link, dict):
            continue
        trace_id, span_id = hex_id(link.get("trace_id"), 32), hex_id(link.get("span_id"), 16)
        if trace_id is None or span_id is None:
            continue
        attributes = Attributes()
        attributes.put_all(plain_attributes(link.get("attributes")))
        links.append({"trace_id": trace_id, "span_id": span_id, "trace_state": "",
                      "flags": 1 if link.get("sampled") is True else 0,
                      "attributes": attributes.values})
    return links


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
        attributes.put("http.route", route_of(name))
    add_semantics(attributes, op, name)
    parent = hex_id(item.get("parent_span_id"), 16)
    if parent is None and not is_segment:
        # Hangs under its segment, unless it is the segment (a segment's own id).
        segment = hex_id(sent.get("sentry.segment.id"), 16)
        parent = segment if segment != span_id else None
    return Span(trace_id, span_id, parent or "", name, kind, start_ns, end_ns, status_code,
                status_message, str(resource["service.name"]), SCOPE, resource,
                attributes.values, [], links=links_of(item.get("links")))


def decode_span_items(payload: Any, now_us: int) -> DecodedSpans:
    """The spans of one `span` item, in the order sent; those that could not be kept
    are counted in `dropped` with their reasons (`items[i]: ...`). `now_us` is not
    used: a span without its times is dropped rather than dated on arrival (it is
    there so that the Sentry decoders are called alike)."""
    out = DecodedSpans()
    read_items(payload, "span", out, _span, out.spans, MAX_SPANS)
    return out
