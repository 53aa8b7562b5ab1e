"""Pure decode functions for OTLP traces: protobuf and OTLP/JSON in, Span records out.

OTLP/JSON is not generic protobuf JSON: trace and span ids are hex (a generic
parser would read them as base64), 64-bit integers come as strings or numbers,
enums as integers (names are accepted too, as the Collector's decoder does),
field names in lowerCamelCase (the proto names are accepted too), unknown fields
are ignored. A span that cannot be kept (a bad id, say) is dropped alone and its
reason counted; a body that is not OTLP at all is InvalidInput.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1 import trace_pb2

from receiver.jsonbody import parse_json
from sounding.errors import InvalidInput
from sounding.otlp_values import attributes_of, json_safe_double
from sounding.records import Span
from sounding.timeutil import MAX_NS

_HEX = frozenset("0123456789abcdefABCDEF")
# ASCII only: str.isdigit() and int() also take other scripts' digits, and int()
# takes "1_000" and surrounding spaces, none of which is OTLP/JSON.
_UINT = re.compile(r"[0-9]+")
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
MAX_DROP_REASONS = 20
# Attribute values (arrays and key-value lists) nest at most this deep, so that the
# stored body reads back and every page shows it (README, "Limits").
MAX_VALUE_DEPTH = 16
_INT32 = range(-(2**31), 2**31)  # span kind and status code: enums, int32 in OTLP


@dataclass(slots=True)
class DecodedSpans:
    spans: list[Span] = field(default_factory=list)
    dropped: int = 0
    reasons: list[str] = field(default_factory=list)  # the first few, for the 400 body

    def drop(self, where: str, reason: str) -> None:
        self.dropped += 1
        if len(self.reasons) < MAX_DROP_REASONS:
            self.reasons.append(f"{where}: {reason}")


class _Drop(Exception):
    """This span cannot be kept; the rest of the request can."""


# fixed64 in OTLP, and decimal strings up to 2^64 - 1 in OTLP/JSON.
_TIME_RANGE = "times must be below 2^63 ns (2262-04-11T23:47:16.854775807Z)"


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
        raise _Drop("traceId must be 16 bytes, not all zero")
    if len(span_id) != 8 or span_id == _ZERO_SPAN_ID:
        raise _Drop("spanId must be 8 bytes, not all zero")
    if len(parent) not in (0, 8):
        raise _Drop("parentSpanId must be empty or 8 bytes")
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if start > MAX_NS or end > MAX_NS:
        raise _Drop(_TIME_RANGE)
    # Reaching the events costs about a microsecond; Span keeps whether there were
    # any, which the exceptions processor would otherwise find out at the same cost.
    events = span.events
    has_events = len(events) > 0
    if has_events:
        for event in events:
            if event.time_unix_nano > MAX_NS:
                raise _Drop(_TIME_RANGE)
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
                except _Drop as exc:
                    out.drop(f"resourceSpans[{ri}].scopeSpans[{si}].spans[{pi}]", str(exc))
    return out


# --- OTLP/JSON ---------------------------------------------------------------

def _get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def _time_ns(value: Any, name: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        raise _Drop(f"{name} must be an integer")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _UINT.fullmatch(value):
        number = int(value)
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    else:
        raise _Drop(f"{name} must be an unsigned integer or a decimal string")
    if not 0 <= number <= MAX_NS:
        raise _Drop(f"{name}: {_TIME_RANGE}")
    return number


def _hex_id(value: Any, name: str, nbytes: int, required: bool) -> str:
    zero = "0" * (nbytes * 2)
    if value is None or value == "":
        value = zero  # OTLP/JSON writes an all-zero (unset) id as an empty string
    if not isinstance(value, str) or len(value) != nbytes * 2 or not _HEX.issuperset(value):
        raise _Drop(f"{name} must be {nbytes * 2} hexadecimal characters")
    value = value.lower()
    if value == zero:
        if required:
            raise _Drop(f"{name} must not be empty or all zero")
        return ""
    return value


def _enum(value: Any, enum: Any, name: str) -> int:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        if value not in _INT32:
            raise _Drop(f"{name} must be a 32-bit integer, got {value}")
        return value
    if isinstance(value, str):
        try:
            return int(enum.Value(value))
        except ValueError:
            pass
    raise _Drop(f"{name} must be an enum number or name, got {value!r}")


def json_any_value(value: Any, depth: int = 0) -> Any:
    """The Python value of an OTLP/JSON AnyValue; `depth` is how many arrays and
    key-value lists hold it."""
    if not isinstance(value, dict):
        raise _Drop("an attribute value must be an AnyValue object")
    for camel, snake in (("stringValue", "string_value"), ("boolValue", "bool_value"),
                         ("intValue", "int_value"), ("doubleValue", "double_value"),
                         ("arrayValue", "array_value"), ("kvlistValue", "kvlist_value"),
                         ("bytesValue", "bytes_value")):
        raw = _get(value, camel, snake)
        if raw is None:
            continue
        if camel == "stringValue" and isinstance(raw, str):
            return raw
        if camel == "boolValue" and isinstance(raw, bool):
            return raw
        if camel == "intValue":
            # int64: a JSON number or, as protobuf JSON writes it, a decimal string.
            if isinstance(raw, int) and not isinstance(raw, bool):
                number = raw
            elif isinstance(raw, float) and raw.is_integer():
                number = int(raw)
            elif isinstance(raw, str) and _INT.fullmatch(raw):
                number = int(raw)
            else:
                break
            if not -(2**63) <= number < 2**63:
                break
            return number
        if camel == "doubleValue":
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                return json_safe_double(float(raw))
            if raw in ("NaN", "Infinity", "-Infinity"):
                return raw
            if isinstance(raw, str) and _FLOAT.fullmatch(raw):
                return json_safe_double(float(raw))  # protobuf JSON allows quoted numbers
            break
        if camel in ("arrayValue", "kvlistValue") and depth >= MAX_VALUE_DEPTH:
            raise _Drop(f"attribute values nest deeper than {MAX_VALUE_DEPTH} levels")
        if camel == "arrayValue" and isinstance(raw, dict):
            return [json_any_value(v, depth + 1)
                    for v in _list(raw.get("values"), "arrayValue.values")]
        if camel == "kvlistValue" and isinstance(raw, dict):
            return json_attributes(raw.get("values"), depth + 1)
        if camel == "bytesValue" and isinstance(raw, str):
            return raw  # already base64, the form bytes are stored in
        raise _Drop(f"attribute value {camel} has the wrong type")
    if not value:
        return None  # an empty AnyValue is valid OTLP: the value is unset
    raise _Drop(f"unreadable attribute value {sorted(value)[:3]}")


def _list(value: Any, name: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Drop(f"{name} must be an array")
    return value


def json_attributes(pairs: Any, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in _list(pairs, "attributes"):
        if not isinstance(pair, dict) or not isinstance(pair.get("key"), str):
            raise _Drop("an attribute must be an object with a string key")
        out[pair["key"]] = json_any_value(pair.get("value", {}), depth)
    return out


def _span_from_json(span: Any, service: str, scope: str, resource: dict[str, Any]) -> Span:
    if not isinstance(span, dict):
        raise _Drop("a span must be an object")
    status = span.get("status") or {}
    if not isinstance(status, dict):
        raise _Drop("status must be an object")
    name = span.get("name", "")
    if not isinstance(name, str):
        raise _Drop("name must be a string")
    message = status.get("message", "")
    if not isinstance(message, str):
        raise _Drop("status.message must be a string")
    events = []
    for event in _list(span.get("events"), "events"):
        if not isinstance(event, dict):
            raise _Drop("an event must be an object")
        events.append({
            "name": str(event.get("name", "")),
            "time_unix_nano": _time_ns(_get(event, "timeUnixNano", "time_unix_nano"),
                                       "event timeUnixNano"),
            "attributes": json_attributes(event.get("attributes")),
        })
    return Span(
        trace_id=_hex_id(_get(span, "traceId", "trace_id"), "traceId", 16, True),
        span_id=_hex_id(_get(span, "spanId", "span_id"), "spanId", 8, True),
        parent_span_id=_hex_id(_get(span, "parentSpanId", "parent_span_id"), "parentSpanId", 8,
                               False),
        name=name,
        kind=_enum(span.get("kind"), trace_pb2.Span.SpanKind, "kind"),
        start_ns=_time_ns(_get(span, "startTimeUnixNano", "start_time_unix_nano"),
                          "startTimeUnixNano"),
        end_ns=_time_ns(_get(span, "endTimeUnixNano", "end_time_unix_nano"), "endTimeUnixNano"),
        status_code=_enum(status.get("code"), trace_pb2.Status.StatusCode, "status.code"),
        status_message=message,
        service_name=service,
        scope_name=scope,
        resource_attributes=resource,
        attributes=json_attributes(span.get("attributes")),
        events=events,
    )


def _envelope_list(obj: dict[str, Any], camel: str, snake: str, where: str) -> list[Any]:
    value = _get(obj, camel, snake)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInput("the body is not OTLP/JSON",
                           [{"field": f"{where}{camel}", "error": "must be an array"}])
    return value


def spans_from_json(body: Any) -> DecodedSpans:
    if not isinstance(body, dict):
        raise InvalidInput("the body is not OTLP/JSON",
                           [{"field": "body", "error": "must be an object with resourceSpans"}])
    out = DecodedSpans()
    for ri, resource_spans in enumerate(_envelope_list(body, "resourceSpans", "resource_spans",
                                                       "")):
        where_r = f"resourceSpans[{ri}]."
        if not isinstance(resource_spans, dict):
            raise InvalidInput("the body is not OTLP/JSON",
                               [{"field": where_r[:-1], "error": "must be an object"}])
        resource_obj = resource_spans.get("resource") or {}
        try:
            resource = json_attributes(resource_obj.get("attributes")
                                       if isinstance(resource_obj, dict) else None)
        except _Drop as exc:
            raise InvalidInput("the body is not OTLP/JSON",
                               [{"field": f"{where_r}resource", "error": str(exc)}]) from exc
        service = str(resource.get("service.name", "unknown_service"))
        for si, scope_spans in enumerate(_envelope_list(resource_spans, "scopeSpans",
                                                        "scope_spans", where_r)):
            where_s = f"{where_r}scopeSpans[{si}]."
            if not isinstance(scope_spans, dict):
                raise InvalidInput("the body is not OTLP/JSON",
                                   [{"field": where_s[:-1], "error": "must be an object"}])
            scope_obj = scope_spans.get("scope") or {}
            scope = scope_obj.get("name", "") if isinstance(scope_obj, dict) else ""
            scope = scope if isinstance(scope, str) else ""
            for pi, span in enumerate(_envelope_list(scope_spans, "spans", "spans", where_s)):
                try:
                    out.spans.append(_span_from_json(span, service, scope, resource))
                except _Drop as exc:
                    out.drop(f"{where_s}spans[{pi}]", str(exc))
    return out


def decode_traces_body(body: bytes, protobuf: bool) -> DecodedSpans:
    """An OTLP trace request body, protobuf or OTLP/JSON, as Span records; the one
    decode used on the event loop and in the decode workers (sounding/offload.py)."""
    return spans_from_proto(parse_proto(body)) if protobuf else spans_from_json(parse_json(body))
