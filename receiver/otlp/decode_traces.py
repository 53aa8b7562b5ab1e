"""Pure decode functions for OTLP traces: protobuf and OTLP/JSON in, Span records out.

OTLP/JSON is not generic protobuf JSON: trace and span ids are hex (a generic
parser would read them as base64), 64-bit integers come as strings or numbers,
enums as integers (names are accepted too, as the Collector's decoder does),
field names in lowerCamelCase (the proto names are accepted too), unknown fields
are ignored. A span that cannot be kept (a bad id, say) is dropped alone and its
reason counted; a body that is not OTLP at all is InvalidInput.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1 import trace_pb2

from model.errors import InvalidInput
from model.otlp_values import attributes_of
from model.records import Span
from model.timeutil import MAX_NS
from receiver.jsonbody import parse_json
from receiver.otlp.json_rules import (
    MAX_VALUE_DEPTH,
    TIME_RANGE,
    Drop,
    Dropped,
    enum,
    envelope_list,
    get,
    hex_id,
    json_attributes,
    json_list,
    time_ns,
)

__all__ = ["MAX_VALUE_DEPTH", "DecodedSpans", "decode_traces_body"]


@dataclass(slots=True)
class DecodedSpans(Dropped):
    spans: list[Span] = field(default_factory=list)  # named as in Batch


# --- protobuf ----------------------------------------------------------------

def parse_proto(body: bytes) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except (DecodeError, ValueError) as exc:
        raise InvalidInput("the body is not a valid OTLP ExportTraceServiceRequest",
                           [{"field": "body", "error": str(exc) or "undecodable protobuf"}]) \
            from exc
    return request


_ZERO_TRACE_ID = bytes(16)
_ZERO_SPAN_ID = bytes(8)


def _span_from_proto(span: trace_pb2.Span, service: str, scope: str,
                     resource: dict[str, Any]) -> Span:
    trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
    if len(trace_id) != 16 or trace_id == _ZERO_TRACE_ID:
        raise Drop("traceId must be 16 bytes, not all zero")
    if len(span_id) != 8 or span_id == _ZERO_SPAN_ID:
        raise Drop("spanId must be 8 bytes, not all zero")
    if len(parent) not in (0, 8):
        raise Drop("parentSpanId must be empty or 8 bytes")
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if start > MAX_NS or end > MAX_NS:
        raise Drop(TIME_RANGE)
    # Reaching the events costs about a microsecond; Span keeps whether there were
    # any, which the exceptions processor would otherwise find out at the same cost.
    events = span.events
    has_events = len(events) > 0
    if has_events:
        for event in events:
            if event.time_unix_nano > MAX_NS:
                raise Drop(TIME_RANGE)
    status = span.status
    # Positional, in the order of Span's arguments: the keyword form costs measurably
    # more at hundreds of thousands of spans a second. Attributes and events stay in
    # the message until a stage asks for them.
    return Span(
        trace_id.hex(), span_id.hex(),
        parent.hex() if parent and parent != _ZERO_SPAN_ID else "",
        span.name, span.kind, start, end, status.code, status.message, service, scope,
        resource, None, None, "", None, span, has_events,
    )


def spans_from_proto(request: ExportTraceServiceRequest) -> DecodedSpans:
    out = DecodedSpans()
    append = out.spans.append
    for ri, resource_spans in enumerate(request.resource_spans):
        resource = attributes_of(resource_spans.resource.attributes)
        service = str(resource.get("service.name", "unknown_service"))
        for si, scope_spans in enumerate(resource_spans.scope_spans):
            scope = scope_spans.scope.name
            for pi, span in enumerate(scope_spans.spans):
                try:
                    append(_span_from_proto(span, service, scope, resource))
                except Drop as exc:
                    out.drop(f"resourceSpans[{ri}].scopeSpans[{si}].spans[{pi}]", str(exc))
    return out


# --- OTLP/JSON ---------------------------------------------------------------

def _span_from_json(span: Any, service: str, scope: str, resource: dict[str, Any]) -> Span:
    if not isinstance(span, dict):
        raise Drop("a span must be an object")
    status = span.get("status") or {}
    if not isinstance(status, dict):
        raise Drop("status must be an object")
    name = span.get("name", "")
    if not isinstance(name, str):
        raise Drop("name must be a string")
    message = status.get("message", "")
    if not isinstance(message, str):
        raise Drop("status.message must be a string")
    events = []
    for event in json_list(span.get("events"), "events"):
        if not isinstance(event, dict):
            raise Drop("an event must be an object")
        events.append({
            "name": str(event.get("name", "")),
            "time_unix_nano": time_ns(get(event, "timeUnixNano", "time_unix_nano"),
                                       "event timeUnixNano"),
            "attributes": json_attributes(event.get("attributes")),
        })
    return Span(
        trace_id=hex_id(get(span, "traceId", "trace_id"), "traceId", 16, True),
        span_id=hex_id(get(span, "spanId", "span_id"), "spanId", 8, True),
        parent_span_id=hex_id(get(span, "parentSpanId", "parent_span_id"), "parentSpanId", 8,
                               False),
        name=name,
        kind=enum(span.get("kind"), trace_pb2.Span.SpanKind, "kind"),
        start_ns=time_ns(get(span, "startTimeUnixNano", "start_time_unix_nano"),
                          "startTimeUnixNano"),
        end_ns=time_ns(get(span, "endTimeUnixNano", "end_time_unix_nano"), "endTimeUnixNano"),
        status_code=enum(status.get("code"), trace_pb2.Status.StatusCode, "status.code"),
        status_message=message,
        service_name=service,
        scope_name=scope,
        resource_attributes=resource,
        attributes=json_attributes(span.get("attributes")),
        events=events,
    )


def spans_from_json(body: Any) -> DecodedSpans:
    if not isinstance(body, dict):
        raise InvalidInput("the body is not OTLP/JSON",
                           [{"field": "body", "error": "must be an object with resourceSpans"}])
    out = DecodedSpans()
    for ri, resource_spans in enumerate(envelope_list(body, "resourceSpans", "resource_spans",
                                                       "")):
        where_r = f"resourceSpans[{ri}]."
        if not isinstance(resource_spans, dict):
            raise InvalidInput("the body is not OTLP/JSON",
                               [{"field": where_r[:-1], "error": "must be an object"}])
        resource_obj = resource_spans.get("resource") or {}
        try:
            resource = json_attributes(resource_obj.get("attributes")
                                       if isinstance(resource_obj, dict) else None)
        except Drop as exc:
            raise InvalidInput("the body is not OTLP/JSON",
                               [{"field": f"{where_r}resource", "error": str(exc)}]) from exc
        service = str(resource.get("service.name", "unknown_service"))
        for si, scope_spans in enumerate(envelope_list(resource_spans, "scopeSpans",
                                                        "scope_spans", where_r)):
            where_s = f"{where_r}scopeSpans[{si}]."
            if not isinstance(scope_spans, dict):
                raise InvalidInput("the body is not OTLP/JSON",
                                   [{"field": where_s[:-1], "error": "must be an object"}])
            scope_obj = scope_spans.get("scope") or {}
            scope = scope_obj.get("name", "") if isinstance(scope_obj, dict) else ""
            scope = scope if isinstance(scope, str) else ""
            for pi, span in enumerate(envelope_list(scope_spans, "spans", "spans", where_s)):
                try:
                    out.spans.append(_span_from_json(span, service, scope, resource))
                except Drop as exc:
                    out.drop(f"{where_s}spans[{pi}]", str(exc))
    return out


def decode_traces_body(body: bytes, protobuf: bool) -> DecodedSpans:
    """An OTLP trace request body, protobuf or OTLP/JSON, as Span records; the one
    decode used on the event loop and in the decode workers (runtime/offload.py)."""
    return spans_from_proto(parse_proto(body)) if protobuf else spans_from_json(parse_json(body))
