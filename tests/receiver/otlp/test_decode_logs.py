"""receiver/otlp/decode_logs.py, the pure decoder: protobuf and OTLP/JSON in,
LogRecord records out; bad records dropped alone, bodies that are not OTLP refused.
A property test checks that a record reads the same from either encoding."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1 import logs_pb2

from model.errors import InvalidInput
from model.records import LogRecord
from receiver.otlp.decode_logs import decode_logs_body
from receiver.otlp.json_rules import MAX_VALUE_DEPTH
from tests.fuzz import proto_strategies as ps

NOW = 1_795_168_800_123_456_000
TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"


def request_of(*records: logs_pb2.LogRecord, service: str = "svc",
               scope: str = "lib") -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    resource_logs.resource.attributes.add(key="service.name",
                                          value=AnyValue(string_value=service))
    scope_logs = resource_logs.scope_logs.add()
    scope_logs.scope.name = scope
    scope_logs.log_records.extend(records)
    return request


def full_record() -> logs_pb2.LogRecord:
    record = logs_pb2.LogRecord(
        time_unix_nano=1_795_168_800_000_000_001, observed_time_unix_nano=1_795_168_800_000_000_002,
        severity_number=logs_pb2.SEVERITY_NUMBER_WARN, severity_text="WARN",
        trace_id=bytes.fromhex(TRACE), span_id=bytes.fromhex(SPAN), flags=1,
        dropped_attributes_count=3, event_name="order.late")
    record.body.string_value = "order 42 is late"
    record.attributes.extend([KeyValue(key="order.id", value=AnyValue(int_value=42))])
    return record


def proto(*records: logs_pb2.LogRecord) -> list[LogRecord]:
    decoded = decode_logs_body(request_of(*records).SerializeToString(), True, NOW)
    assert decoded.dropped == 0, decoded.reasons
    return decoded.logs


def from_json(document: Any) -> Any:
    return decode_logs_body(json.dumps(document).encode(), False, NOW)


def json_request(*records: dict[str, Any]) -> dict[str, Any]:
    return {"resourceLogs": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
        "scopeLogs": [{"scope": {"name": "lib"}, "logRecords": list(records)}]}]}


def fields(record: LogRecord) -> tuple[Any, ...]:
    return (record.time_ns, record.observed_ns, record.severity_number, record.severity_text,
            record.trace_id, record.span_id, record.flags, record.event_name,
            record.service_name, record.scope_name, record.resource_attributes,
            record.attributes, record.body)


# --- protobuf ------------------------------------------------------------------

def test_a_protobuf_record_keeps_every_field_and_its_message() -> None:
    message = full_record()
    (record,) = proto(message)
    assert record.untouched and record.otlp == message
    assert fields(record) == (
        1_795_168_800_000_000_001, 1_795_168_800_000_000_002, 13, "WARN", TRACE, SPAN, 1,
        "order.late", "svc", "lib", {"service.name": "svc"}, {"order.id": 42},
        "order 42 is late")


def test_unset_ids_are_empty_and_an_unset_observed_time_is_the_time_received() -> None:
    (plain, zeros) = proto(logs_pb2.LogRecord(severity_text="INFO"),
                           logs_pb2.LogRecord(trace_id=bytes(16), span_id=bytes(8)))
    assert (plain.trace_id, plain.span_id, plain.time_ns, plain.observed_ns) == ("", "", 0, NOW)
    assert plain.when_ns == NOW and plain.body is None
    assert (zeros.trace_id, zeros.span_id) == ("", "")
    assert plain.otlp.observed_time_unix_nano == 0  # the stored record stays as sent


@pytest.mark.parametrize(("record", "reason"), [
    (logs_pb2.LogRecord(trace_id=b"short"), "traceId must be empty or 16 bytes"),
    (logs_pb2.LogRecord(span_id=b"\x01" * 9), "spanId must be empty or 8 bytes"),
    (logs_pb2.LogRecord(time_unix_nano=2**63), "2^63"),
    (logs_pb2.LogRecord(observed_time_unix_nano=2**64 - 1), "2^63"),
    (logs_pb2.LogRecord(severity_number=25), "severityNumber must be 0 to 24"),
    (logs_pb2.LogRecord(severity_number=-1), "severityNumber must be 0 to 24"),
])
def test_a_bad_protobuf_record_is_dropped_alone(record: logs_pb2.LogRecord, reason: str) -> None:
    decoded = decode_logs_body(request_of(full_record(), record).SerializeToString(), True, NOW)
    assert len(decoded.logs) == 1 and decoded.dropped == 1
    (why,) = decoded.reasons
    assert why.startswith("resourceLogs[0].scopeLogs[0].logRecords[1]: ") and reason in why


def test_a_body_that_is_not_protobuf_is_invalid() -> None:
    with pytest.raises(InvalidInput) as caught:
        decode_logs_body(b"\xff\xff\xff", True, NOW)
    assert caught.value.details[0]["field"] == "body"


# --- OTLP/JSON -----------------------------------------------------------------

def test_otlp_json_reads_as_the_specification_writes_it() -> None:
    decoded = from_json(json_request({
        "timeUnixNano": "1795168800000000001", "observedTimeUnixNano": 1795168800000000002,
        "severityNumber": "SEVERITY_NUMBER_WARN", "severityText": "WARN",
        "traceId": TRACE.upper(), "spanId": SPAN, "flags": 1, "droppedAttributesCount": 3,
        "eventName": "order.late", "body": {"stringValue": "order 42 is late"},
        "attributes": [{"key": "order.id", "value": {"intValue": "42"}}]}))
    (record,) = decoded.logs
    # Turned into the same message, so stored and keyed as the protobuf record is.
    assert record.otlp == full_record() and record.untouched
    assert fields(record) == fields(proto(full_record())[0])


def test_otlp_json_takes_snake_case_and_numbers_for_enums() -> None:
    decoded = from_json({"resource_logs": [{"scope_logs": [{"log_records": [{
        "time_unix_nano": 5, "severity_number": 17, "severity_text": "ERROR",
        "trace_id": TRACE, "span_id": "", "event_name": "e",
        "body": {"kvlist_value": {"values": [
            {"key": "a", "value": {"array_value": {"values": [{"bool_value": True}]}}}]}},
    }]}]}]})
    (record,) = decoded.logs
    assert (record.time_ns, record.severity_number, record.trace_id, record.span_id,
            record.event_name, record.service_name) == (5, 17, TRACE, "", "e", "unknown_service")
    assert record.body == {"a": [True]}


@pytest.mark.parametrize(("record", "reason"), [
    ({"traceId": "xyz"}, "traceId must be 32 hexadecimal characters"),
    ({"spanId": 5}, "spanId must be 16 hexadecimal characters"),
    ({"timeUnixNano": "9223372036854775808"}, "2^63"),
    ({"timeUnixNano": -1}, "2^63"),
    ({"severityNumber": "LOUD"}, "severityNumber must be an enum"),
    ({"severityNumber": 30}, "severityNumber must be 0 to 24"),
    ({"severityText": 3}, "severityText must be a string"),
    ({"flags": 2**32}, "flags must be an unsigned 32-bit integer"),
    ({"droppedAttributesCount": "-1"}, "droppedAttributesCount must be an unsigned"),
    ({"body": {"intValue": "x"}}, "body: "),
    ({"body": "plain"}, "body: "),
    ({"attributes": [{"value": {}}]}, "string key"),
    ("not an object", "a log record must be an object"),
])
def test_a_bad_json_record_is_dropped_alone(record: Any, reason: str) -> None:
    decoded = from_json(json_request({"body": {"stringValue": "kept"}}, record))
    assert [r.body for r in decoded.logs] == ["kept"] and decoded.dropped == 1
    (why,) = decoded.reasons
    assert why.startswith("resourceLogs[0].scopeLogs[0].logRecords[1]: ") and reason in why, why


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"stringValue": "bottom"}
    for _ in range(depth):
        value = {"arrayValue": {"values": [value]}}
    return value


def test_values_nest_at_most_16_levels() -> None:
    decoded = from_json(json_request({"body": _nested(MAX_VALUE_DEPTH)},
                                     {"body": _nested(MAX_VALUE_DEPTH + 1)}))
    assert len(decoded.logs) == 1 and decoded.dropped == 1
    assert "deeper than 16" in decoded.reasons[0]


@pytest.mark.parametrize(("document", "where"), [
    ([], "body"),
    ({"resourceLogs": {}}, "resourceLogs"),
    ({"resourceLogs": [5]}, "resourceLogs[0]"),
    ({"resourceLogs": [{"scopeLogs": "x"}]}, "resourceLogs[0].scopeLogs"),
    ({"resourceLogs": [{"scopeLogs": [{"logRecords": {}}]}]},
     "resourceLogs[0].scopeLogs[0].logRecords"),
    ({"resourceLogs": [{"resource": {"attributes": [{"key": 1}]}}]}, "resourceLogs[0].resource"),
])
def test_a_body_that_is_not_otlp_json_is_invalid_naming_the_field(document: Any,
                                                                   where: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        from_json(document)
    assert caught.value.details[0]["field"] == where


# --- the same record, either encoding ----------------------------------------------

def otlp_json(record: logs_pb2.LogRecord) -> dict[str, Any]:
    """The record as OTLP/JSON writes it: protobuf JSON, but ids in hex. (protobuf JSON
    leaves out an empty key, so the records drawn have none.)"""
    document = json_format.MessageToDict(record)
    for key in ("traceId", "spanId"):
        if key in document:
            document[key] = base64.b64decode(document[key]).hex()
    return document


def _valid_value(value: AnyValue) -> bool:
    return ps.any_depth(value) <= MAX_VALUE_DEPTH


@st.composite
def valid_records(draw: st.DrawFn) -> logs_pb2.LogRecord:
    record = logs_pb2.LogRecord(
        time_unix_nano=draw(st.integers(0, 2**63 - 1)),
        observed_time_unix_nano=draw(st.integers(0, 2**63 - 1)),
        severity_number=draw(st.integers(0, 24)), severity_text=draw(st.text(max_size=8)),
        trace_id=draw(st.sampled_from([b"", b"\x01" * 16])),
        span_id=draw(st.sampled_from([b"", b"\x02" * 8])),
        flags=draw(st.integers(0, 2**32 - 1)),
        dropped_attributes_count=draw(st.integers(0, 2**32 - 1)),
        event_name=draw(st.text(max_size=8)))
    record.attributes.extend(draw(st.lists(
        st.builds(KeyValue, key=st.text(min_size=1, max_size=5),
                  value=ps.any_values().filter(_valid_value)), max_size=3)))
    body = draw(st.none() | ps.any_values().filter(_valid_value))
    if body is not None:
        record.body.CopyFrom(body)
    return record


@settings(max_examples=150, deadline=None, derandomize=True)
@given(valid_records())
def test_a_record_reads_the_same_from_protobuf_and_from_otlp_json(
        record: logs_pb2.LogRecord) -> None:
    (from_proto,) = proto(record)
    decoded = from_json(json_request(otlp_json(record)))
    assert decoded.dropped == 0, decoded.reasons
    (from_otlp_json,) = decoded.logs
    assert fields(from_otlp_json) == fields(from_proto)
    assert from_otlp_json.otlp.dropped_attributes_count == record.dropped_attributes_count
