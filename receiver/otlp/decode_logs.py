"""Pure decode functions for OTLP logs: an ExportLogsServiceRequest, protobuf or
OTLP/JSON (receiver/otlp/json_rules.py's rules), in; LogRecord records out.

Every record keeps the OTLP LogRecord message it came in (`otlp`): one that
arrived as protobuf and that no stage changes is stored as those bytes
(storage/logbody.py), and one that arrived as OTLP/JSON is turned into the same
message here, so that both are stored, keyed and forwarded alike. A record that
cannot be kept (an id of the wrong length, a time past 2^63 ns, a severity outside
0..24, a value nested deeper than 16 levels) is dropped alone and its reason
counted; a body that is not OTLP at all is InvalidInput.

A record whose observed time is unset gets `now_ns`, the time it was received:
that is what the observed time means (when the collection system saw it), and a
record must have a time to be listed. The stored message keeps it unset, so a
retried request is the same record (the same key).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1 import logs_pb2

from model.errors import InvalidInput
from model.otlp_values import attributes_of, fill_any_value, fill_key_values
from model.records import LogRecord
from model.timeutil import MAX_NS
from receiver.jsonbody import parse_json
from receiver.otlp.json_rules import (
    TIME_RANGE,
    Drop,
    Dropped,
    enum,
    envelope_list,
    get,
    hex_id,
    json_any_value,
    json_attributes,
    json_integer,
    time_ns,
)

MAX_SEVERITY = 24  # SEVERITY_NUMBER_FATAL4
_UINT32 = range(2**32)
_ZERO_TRACE_ID = bytes(16)
_ZERO_SPAN_ID = bytes(8)
_NOT_OTLP_JSON = "the body is not OTLP/JSON"


@dataclass(slots=True)
class DecodedLogs(Dropped):
    logs: list[LogRecord] = field(default_factory=list)  # named as in Batch


def _severity(number: int) -> int:
    if not 0 <= number <= MAX_SEVERITY:
        raise Drop(f"severityNumber must be 0 to {MAX_SEVERITY}, got {number}")
    return number


# --- protobuf ----------------------------------------------------------------

def parse_proto(body: bytes) -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(body)
    except (DecodeError, ValueError) as exc:
        raise InvalidInput("the body is not a valid OTLP ExportLogsServiceRequest",
                           [{"field": "body", "error": str(exc) or "undecodable protobuf"}]) \
            from exc
    return request


def _record_from_proto(record: logs_pb2.LogRecord, service: str, scope: str,
                       resource: dict[str, Any], now_ns: int) -> LogRecord:
    trace_id, span_id = record.trace_id, record.span_id
    if len(trace_id) not in (0, 16):
        raise Drop("traceId must be empty or 16 bytes")
    if len(span_id) not in (0, 8):
        raise Drop("spanId must be empty or 8 bytes")
    time, observed = record.time_unix_nano, record.observed_time_unix_nano
    if time > MAX_NS or observed > MAX_NS:
        raise Drop(TIME_RANGE)
    # Positional, in the order of LogRecord's arguments (cheaper, as for spans);
    # attributes and body stay in the message until a stage asks for them.
    return LogRecord(
        time, observed or now_ns, _severity(record.severity_number), record.severity_text,
        trace_id.hex() if trace_id != _ZERO_TRACE_ID else "",
        span_id.hex() if span_id != _ZERO_SPAN_ID else "",
        record.flags, record.event_name, service, scope, resource, None, None, record)


def logs_from_proto(request: ExportLogsServiceRequest, now_ns: int) -> DecodedLogs:
    out = DecodedLogs()
    append = out.logs.append
    for ri, resource_logs in enumerate(request.resource_logs):
        resource = attributes_of(resource_logs.resource.attributes)
        service = str(resource.get("service.name", "unknown_service"))
        for si, scope_logs in enumerate(resource_logs.scope_logs):
            scope = scope_logs.scope.name
            for li, record in enumerate(scope_logs.log_records):
                try:
                    append(_record_from_proto(record, service, scope, resource, now_ns))
                except Drop as exc:
                    out.drop(f"resourceLogs[{ri}].scopeLogs[{si}].logRecords[{li}]", str(exc))
    return out


# --- OTLP/JSON ---------------------------------------------------------------

def _uint32(value: Any, name: str) -> int:
    """A uint32 of OTLP/JSON: a number, or a decimal string as protobuf JSON allows."""
    if value is None:
        return 0
    number = json_integer(value, signed=False)
    if number is None:
        raise Drop(f"{name} must be an unsigned 32-bit integer")
    if number not in _UINT32:
        raise Drop(f"{name} must be an unsigned 32-bit integer, got {number}")
    return number


def _text(value: Any, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Drop(f"{name} must be a string")
    return value


def _record_from_json(record: Any, service: str, scope: str, resource: dict[str, Any],
                      now_ns: int) -> LogRecord:
    if not isinstance(record, dict):
        raise Drop("a log record must be an object")
    trace_id = hex_id(get(record, "traceId", "trace_id"), "traceId", 16, False)
    span_id = hex_id(get(record, "spanId", "span_id"), "spanId", 8, False)
    time = time_ns(get(record, "timeUnixNano", "time_unix_nano"), "timeUnixNano")
    observed = time_ns(get(record, "observedTimeUnixNano", "observed_time_unix_nano"),
                       "observedTimeUnixNano")
    severity = _severity(enum(get(record, "severityNumber", "severity_number"),
                              logs_pb2.SeverityNumber, "severityNumber"))
    message = logs_pb2.LogRecord(
        time_unix_nano=time, observed_time_unix_nano=observed,
        severity_number=severity,  # type: ignore[arg-type]  # an int is what it holds
        severity_text=_text(get(record, "severityText", "severity_text"), "severityText"),
        flags=_uint32(record.get("flags"), "flags"),
        dropped_attributes_count=_uint32(
            get(record, "droppedAttributesCount", "dropped_attributes_count"),
            "droppedAttributesCount"),
        event_name=_text(get(record, "eventName", "event_name"), "eventName"),
        trace_id=bytes.fromhex(trace_id), span_id=bytes.fromhex(span_id))
    fill_key_values(message.attributes, json_attributes(record.get("attributes")))
    raw_body = record.get("body")
    if raw_body is not None:
        try:
            body = json_any_value(raw_body)
        except Drop as exc:
            raise Drop(f"body: {exc}") from None
        fill_any_value(message.body, body, depth=2)
    # The record reads its values out of the message, as one that came as protobuf.
    return LogRecord(time, observed or now_ns, severity, message.severity_text, trace_id,
                     span_id, message.flags, message.event_name, service, scope, resource,
                     None, None, message)


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInput(_NOT_OTLP_JSON, [{"field": where, "error": "must be an object"}])
    return value


def logs_from_json(body: Any, now_ns: int) -> DecodedLogs:
    if not isinstance(body, dict):
        raise InvalidInput(_NOT_OTLP_JSON,
                           [{"field": "body", "error": "must be an object with resourceLogs"}])
    out = DecodedLogs()
    for ri, resource_logs in enumerate(envelope_list(body, "resourceLogs", "resource_logs", "")):
        where_r = f"resourceLogs[{ri}]."
        resource_logs = _object(resource_logs, where_r[:-1])
        resource_obj = resource_logs.get("resource") or {}
        try:
            resource = json_attributes(resource_obj.get("attributes")
                                       if isinstance(resource_obj, dict) else None)
        except Drop as exc:
            raise InvalidInput(_NOT_OTLP_JSON,
                               [{"field": f"{where_r}resource", "error": str(exc)}]) from exc
        service = str(resource.get("service.name", "unknown_service"))
        for si, scope_logs in enumerate(envelope_list(resource_logs, "scopeLogs", "scope_logs",
                                                      where_r)):
            where_s = f"{where_r}scopeLogs[{si}]."
            scope_logs = _object(scope_logs, where_s[:-1])
            scope_obj = scope_logs.get("scope") or {}
            scope = scope_obj.get("name", "") if isinstance(scope_obj, dict) else ""
            scope = scope if isinstance(scope, str) else ""
            for li, record in enumerate(envelope_list(scope_logs, "logRecords", "log_records",
                                                      where_s)):
                try:
                    out.logs.append(_record_from_json(record, service, scope, resource, now_ns))
                except Drop as exc:
                    out.drop(f"{where_s}logRecords[{li}]", str(exc))
    return out


def decode_logs_body(body: bytes, protobuf: bool, now_ns: int) -> DecodedLogs:
    """An OTLP logs request body, protobuf or OTLP/JSON, as LogRecord records; the one
    decode used on the event loop and in the decode workers (runtime/offload.py).
    `now_ns`: when it was received, the observed time of records that have none."""
    if protobuf:
        return logs_from_proto(parse_proto(body), now_ns)
    return logs_from_json(parse_json(body), now_ns)
