"""Hypothesis strategies for protobuf bodies: OTLP ExportTraceServiceRequest and
ExportLogsServiceRequest, and Sounding's own gRPC messages
(proto/sounding/v1/ingest.proto), with the field values
that broke Sounding before, deep AnyValue and Struct nesting, strings that are not
UTF-8 on the wire, and byte-level damage (truncation, flipped and inserted bytes)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cache
from typing import Any

from google.protobuf import struct_pb2, timestamp_pb2
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from proto.sounding.v1 import ingest_pb2
from tests.fuzz.strategies import EDGE_FLOATS, EDGE_INTS, uniform, weighted

# Where a string on the wire is swapped for bytes that are not UTF-8 (same length,
# so the length prefix stays right).
NOT_UTF8 = b"\xed\xa0\x80\xc0\xaf\xff"
HOLE = "\x01" * len(NOT_UTF8)
# Protobuf's parser refuses messages nested deeper than 100; an AnyValue level is two
# messages, a Struct level three. Past this many levels a door may refuse the body.
PARSEABLE_ANY_DEPTH = 40
PARSEABLE_STRUCT_DEPTH = 25

U64_EDGES = [0, 1, 1_700_000_000_000_000_000, 2**63 - 1, 2**63, 2**64 - 1,
             9_999_999_999_999_999_999]
I32_EDGES = [0, 1, 2, 5, 6, -1, 2**31 - 1, -(2**31)]
# Timestamp seconds: 0001-01-01, 9999-12-31 and beyond; nanos in and out of [0, 1e9).
TS_SECONDS = [0, -1, -62_135_596_800, -62_135_596_801, 253_402_300_799, 253_402_300_800,
              9_223_372_036, 2**63 - 1, -(2**63), 1_763_719_200]
TS_NANOS = [0, 999_999_999, 1_000_000_000, -1, 2**31 - 1, -(2**31)]


@dataclass
class ProtoCase:
    body: bytes
    sentinel: str  # a valid record sent beside the others (trace id, fingerprint, route)
    must_keep: bool  # the rules oblige the door to keep the sentinel
    intact: bool  # no byte damaged: if the body is accepted, so is the sentinel

    def __repr__(self) -> str:
        body = self.body if len(self.body) <= 3000 else self.body[:3000] + b"..."
        return f"ProtoCase(sentinel={self.sentinel!r}, must_keep={self.must_keep}, body={body!r})"


@cache
def texts() -> st.SearchStrategy[str]:
    plain = st.text(max_size=20)
    return uniform(plain, plain, plain, st.sampled_from(["", HOLE, HOLE, "\x00", "x" * 4096]))


@cache
def leaf_values() -> st.SearchStrategy[AnyValue]:
    return uniform(
        texts().map(lambda t: AnyValue(string_value=t)),
        st.booleans().map(lambda b: AnyValue(bool_value=b)),
        uniform(st.sampled_from([e for e in EDGE_INTS if -(2**63) <= e < 2**63]),
                  st.integers(-(2**63), 2**63 - 1)).map(lambda i: AnyValue(int_value=i)),
        uniform(st.sampled_from(EDGE_FLOATS), st.floats()).map(
            lambda f: AnyValue(double_value=f)),
        st.binary(max_size=20).map(lambda b: AnyValue(bytes_value=b)),
        st.just(AnyValue()),
    )


def _array(values: list[AnyValue]) -> AnyValue:
    value = AnyValue()
    value.array_value.values.extend(values)
    return value


def _kvlist(values: list[AnyValue]) -> AnyValue:
    value = AnyValue()
    value.kvlist_value.values.extend(KeyValue(key=f"k{i}", value=v) for i, v in enumerate(values))
    return value


def deep_any(depth: int, kvlist: bool) -> AnyValue:
    value = AnyValue(string_value="bottom")
    for _ in range(depth):
        value = _kvlist([value]) if kvlist else _array([value])
    return value


@cache
def any_values() -> st.SearchStrategy[AnyValue]:
    nested = st.recursive(leaf_values(), lambda inner: uniform(
        st.lists(inner, max_size=3).map(_array), st.lists(inner, max_size=3).map(_kvlist)),
        max_leaves=8)
    # Deeper ones than the protobuf runtime builds are spliced in as bytes (deep_span).
    deep = st.tuples(st.sampled_from([15, 16, 17, 22]), st.booleans()).map(
        lambda t: deep_any(*t))
    return uniform(nested, nested, deep)


def any_depth(value: AnyValue) -> int:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return 1 + max((any_depth(v) for v in value.array_value.values), default=0)
    if kind == "kvlist_value":
        return 1 + max((any_depth(kv.value) for kv in value.kvlist_value.values), default=0)
    return 0


@cache
def attributes() -> st.SearchStrategy[list[KeyValue]]:
    return st.lists(st.builds(KeyValue, key=texts(), value=any_values()), max_size=3)


@cache
def ids(size: int) -> st.SearchStrategy[bytes]:
    """Mostly valid ids (so that the span's other fields are reached), sometimes not."""
    valid = st.binary(min_size=size, max_size=size).map(lambda b: b"\x01" + b[1:])
    return weighted((4, valid), (1, st.binary(max_size=size + 4)), (1, st.just(bytes(size))))


@st.composite
def spans(draw: st.DrawFn) -> trace_pb2.Span:
    span = trace_pb2.Span(
        trace_id=draw(ids(16)), span_id=draw(ids(8)),
        parent_span_id=draw(uniform(st.just(b""), st.just(b""), ids(8))),
        name=draw(weighted((12, texts()), (1, st.just("x" * 70_000)))),
        kind=draw(uniform(st.sampled_from(I32_EDGES), st.integers(-(2**31), 2**31 - 1))),
        start_time_unix_nano=draw(st.sampled_from(U64_EDGES)),
        end_time_unix_nano=draw(st.sampled_from(U64_EDGES)))
    span.attributes.extend(draw(attributes()))
    span.status.code = draw(st.sampled_from(I32_EDGES))
    span.status.message = draw(texts())
    for _ in range(draw(st.integers(0, 2))):
        event = span.events.add(name=draw(st.sampled_from(["exception", "log", HOLE])),
                                time_unix_nano=draw(st.sampled_from(U64_EDGES)))
        event.attributes.extend([
            KeyValue(key="exception.type", value=draw(leaf_values())),
            KeyValue(key="exception.message", value=draw(leaf_values())),
            KeyValue(key="exception.stacktrace", value=draw(leaf_values()))])
    return span


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field."""
    tag, size, out = (number << 3) | 2, len(payload), bytearray()
    out.append(tag)
    while True:
        byte, size = size & 0x7F, size >> 7
        out.append(byte | (0x80 if size else 0))
        if not size:
            return bytes(out) + payload


def deep_resource_spans(depth: int) -> bytes:
    """A ResourceSpans field (of ExportTraceServiceRequest) holding one span whose
    attribute nests `depth` arrays: written as bytes, since the protobuf runtime
    refuses to build (or parse) more than 100 levels."""
    value = AnyValue(string_value="bottom").SerializeToString()
    for _ in range(depth):
        value = _field(5, _field(1, value))  # AnyValue.array_value.values
    span, _ = sentinel_span()
    span_bytes = span.SerializeToString() + _field(9, _field(1, b"deep") + _field(2, value))
    return _field(1, _field(2, _field(2, span_bytes)))


def sentinel_span() -> tuple[trace_pb2.Span, str]:
    trace_id = uuid.uuid4().hex
    return trace_pb2.Span(trace_id=bytes.fromhex(trace_id), span_id=b"\x01" * 8, name="ok",
                          kind=2, start_time_unix_nano=1_700_000_000_000_000_000,
                          end_time_unix_nano=1_700_000_000_100_000_000), trace_id


@cache
def damage() -> st.SearchStrategy[str]:
    return st.sampled_from(["none"] * 6 + ["not_utf8", "not_utf8", "truncate", "flip",
                                           "insert"])


@st.composite
def damaged(draw: st.DrawFn, body: bytes, how: str) -> bytes:
    if how == "not_utf8":
        return body.replace(HOLE.encode(), NOT_UTF8)
    if how == "truncate" and body:
        return body[:draw(st.integers(0, len(body) - 1))]
    if how == "flip" and body:
        at = draw(st.integers(0, len(body) - 1))
        return body[:at] + bytes([body[at] ^ draw(st.integers(1, 255))]) + body[at + 1:]
    if how == "insert":
        at = draw(st.integers(0, len(body)))
        return body[:at] + draw(st.binary(min_size=1, max_size=12)) + body[at:]
    return body


@st.composite
def trace_requests(draw: st.DrawFn) -> ProtoCase:
    """An ExportTraceServiceRequest of odd spans, and beside them (in a resource of
    their own) one valid span that must be stored whenever the body is readable."""
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.extend(draw(attributes()))
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = draw(texts())
    scope_spans.spans.extend(draw(st.lists(spans(), min_size=1, max_size=3)))
    sentinel, trace_id = sentinel_span()
    good = request.resource_spans.add()
    good.resource.attributes.add(key="service.name", value=AnyValue(string_value="fuzz"))
    good.scope_spans.add().spans.append(sentinel)
    body = request.SerializeToString()
    deep_bytes = draw(st.sampled_from([0] * 8 + [60, 3000]))
    if deep_bytes:
        body += deep_resource_spans(deep_bytes)
    how = draw(damage())
    if HOLE.encode() not in body and how == "not_utf8":
        how = "none"
    deepest = max((any_depth(kv.value) for rs in request.resource_spans
                   for kv in rs.resource.attributes), default=0)
    deepest = max([deepest] + [any_depth(kv.value) for span in scope_spans.spans
                               for kv in [*span.attributes,
                                          *(a for e in span.events for a in e.attributes)]])
    must_keep = how == "none" and deepest <= PARSEABLE_ANY_DEPTH and not deep_bytes
    return ProtoCase(draw(damaged(body, how)), trace_id, must_keep, how == "none")


# --- Sounding's own messages --------------------------------------------------------

@cache
def timestamps() -> st.SearchStrategy[timestamp_pb2.Timestamp | None]:
    return uniform(st.none(), st.builds(timestamp_pb2.Timestamp,
                                          seconds=st.sampled_from(TS_SECONDS),
                                          nanos=st.sampled_from(TS_NANOS)))


@cache
def struct_values() -> st.SearchStrategy[struct_pb2.Value]:
    return uniform(
        uniform(st.sampled_from(EDGE_FLOATS), st.floats()).map(
            lambda f: struct_pb2.Value(number_value=f)),
        texts().map(lambda t: struct_pb2.Value(string_value=t)),
        st.booleans().map(lambda b: struct_pb2.Value(bool_value=b)),
        st.just(struct_pb2.Value(null_value=struct_pb2.NULL_VALUE)),
    )


def deep_struct(depth: int, as_list: bool) -> struct_pb2.Struct:
    value = struct_pb2.Value(number_value=1)
    for _ in range(depth):
        if as_list:
            value = struct_pb2.Value(list_value=struct_pb2.ListValue(values=[value]))
        else:
            value = struct_pb2.Value(struct_value=struct_pb2.Struct(fields={"a": value}))
    return struct_pb2.Struct(fields={"deep": value})


def deep_params_field(depth: int) -> bytes:
    """ErrorRecord.params nesting `depth` lists, as bytes: deeper than the protobuf
    runtime builds."""
    value = struct_pb2.Value(number_value=1).SerializeToString()
    for _ in range(depth):
        value = _field(6, _field(1, value))  # Value.list_value.values
    return _field(7, _field(1, _field(1, b"deep") + _field(2, value)))


@cache
def params() -> st.SearchStrategy[tuple[struct_pb2.Struct | None, int]]:
    """(params, nesting depth)."""
    flat = st.dictionaries(texts(), struct_values(), max_size=4).map(
        lambda d: (struct_pb2.Struct(fields=d), 1))
    deep = st.tuples(st.sampled_from([15, 16, 17, 24]), st.booleans()).map(
        lambda t: (deep_struct(*t), t[0] + 1))
    return uniform(st.just((None, 0)), flat, deep)


def _set(message: Any, name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, timestamp_pb2.Timestamp | struct_pb2.Struct):
        getattr(message, name).CopyFrom(value)
    else:
        setattr(message, name, value)


@dataclass
class ErrorCase:
    wire: bytes  # a serialized ErrorRecord
    depth: int  # how deep its params nest


@st.composite
def error_records(draw: st.DrawFn) -> ErrorCase:
    """An odd ErrorRecord, serialized."""
    record = ingest_pb2.ErrorRecord(backtrace=draw(st.lists(texts(), max_size=3)))
    for name in ("exception_class", "message", "request_id", "user_id", "trace_id",
                 "span_id"):
        _set(record, name, draw(uniform(st.none(), texts())))
    _set(record, "fingerprint", draw(uniform(st.none(), texts())))
    _set(record, "timestamp", draw(timestamps()))
    struct, depth = draw(params())
    _set(record, "params", struct)
    if draw(st.booleans()):
        record.source_context.file = draw(texts())
        record.source_context.lineno = draw(st.sampled_from(I32_EDGES))
        record.source_context.context_line = draw(texts())
    wire = record.SerializeToString()
    very_deep = draw(st.sampled_from([0, 0, 0, 0, 60, 600]))
    if very_deep:
        wire += deep_params_field(very_deep)
    return ErrorCase(wire, max(depth, very_deep + 1))


def error_batch(*records: bytes) -> bytes:
    """An ErrorBatch of serialized ErrorRecords."""
    return b"".join(_field(1, record) for record in records)


def valid_error_record(fingerprint: str) -> ingest_pb2.ErrorRecord:
    return ingest_pb2.ErrorRecord(exception_class="E", message="m", backtrace=["a.py:1"],
                                  fingerprint=fingerprint)


@st.composite
def deploy_records(draw: st.DrawFn) -> ingest_pb2.DeployRecord:
    record = ingest_pb2.DeployRecord()
    for name in ("git_sha", "version", "env", "deployer", "description", "service"):
        _set(record, name, draw(uniform(st.none(), texts())))
    _set(record, "timestamp", draw(timestamps()))
    return record


@st.composite
def request_metrics(draw: st.DrawFn) -> ingest_pb2.RequestMetric:
    record = ingest_pb2.RequestMetric()
    for name in ("method", "route", "path", "service", "env", "request_id", "trace_id"):
        _set(record, name, draw(uniform(st.none(), texts())))
    _set(record, "status", draw(uniform(st.none(), st.sampled_from([200, *I32_EDGES]))))
    _set(record, "duration_ms", draw(uniform(st.none(), st.sampled_from(EDGE_FLOATS))))
    _set(record, "timestamp", draw(timestamps()))
    return record


def valid_request_metric(route: str) -> ingest_pb2.RequestMetric:
    return ingest_pb2.RequestMetric(method="GET", route=route, status=200, duration_ms=1.5)


# --- OTLP logs ---------------------------------------------------------------------

@st.composite
def log_records(draw: st.DrawFn) -> logs_pb2.LogRecord:
    record = logs_pb2.LogRecord(
        trace_id=draw(uniform(st.just(b""), ids(16))), span_id=draw(uniform(st.just(b""), ids(8))),
        time_unix_nano=draw(st.sampled_from(U64_EDGES)),
        observed_time_unix_nano=draw(st.sampled_from(U64_EDGES)),
        severity_number=draw(uniform(st.sampled_from([0, 9, 24, 25, -1]),
                                     st.integers(-(2**31), 2**31 - 1))),
        severity_text=draw(texts()), event_name=draw(texts()),
        flags=draw(st.sampled_from([0, 1, 2**32 - 1])),
        dropped_attributes_count=draw(st.sampled_from([0, 1, 2**32 - 1])))
    record.attributes.extend(draw(attributes()))
    if draw(st.booleans()):
        record.body.CopyFrom(draw(any_values()))
    return record


def sentinel_log() -> tuple[logs_pb2.LogRecord, str]:
    trace_id = uuid.uuid4().hex
    record = logs_pb2.LogRecord(trace_id=bytes.fromhex(trace_id), span_id=b"\x01" * 8,
                                time_unix_nano=1_700_000_000_000_000_000, severity_number=9)
    record.body.string_value = "ok"
    return record, trace_id


@st.composite
def log_requests(draw: st.DrawFn) -> ProtoCase:
    """An ExportLogsServiceRequest of odd records, and beside them (in a resource of
    their own) one valid record that must be stored whenever the body is readable."""
    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    resource_logs.resource.attributes.extend(draw(attributes()))
    scope_logs = resource_logs.scope_logs.add()
    scope_logs.scope.name = draw(texts())
    scope_logs.log_records.extend(draw(st.lists(log_records(), min_size=1, max_size=3)))
    sentinel, trace_id = sentinel_log()
    good = request.resource_logs.add()
    good.resource.attributes.add(key="service.name", value=AnyValue(string_value="fuzz"))
    good.scope_logs.add().log_records.append(sentinel)
    body = request.SerializeToString()
    how = draw(damage())
    if HOLE.encode() not in body and how == "not_utf8":
        how = "none"
    deepest = max([0] + [any_depth(kv.value) for kv in resource_logs.resource.attributes]
                  + [any_depth(kv.value) for record in scope_logs.log_records
                     for kv in record.attributes]
                  + [any_depth(record.body) for record in scope_logs.log_records])
    must_keep = how == "none" and deepest <= PARSEABLE_ANY_DEPTH
    return ProtoCase(draw(damaged(body, how)), trace_id, must_keep, how == "none")
