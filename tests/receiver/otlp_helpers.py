"""Building OTLP requests and reading the stored spans back, for the OTLP tests.

`sent_spans` describes what a client sent in one neutral shape (the one the SDK
client scripts print); `stored_spans` reads the same shape back from the store, so
a test compares the two whole: nothing lost, nothing altered.
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1 import trace_pb2

from storage import spanbody
from tests.support.server import Server

# Every AnyValue kind, as OTLP carries it and as Sounding stores it (bytes as base64).
EVERY_KIND: dict[str, tuple[AnyValue, Any]] = {
    "a.string": (AnyValue(string_value="naïve ✓"), "naïve ✓"),
    "a.bool": (AnyValue(bool_value=True), True),
    "a.int": (AnyValue(int_value=-(2**63)), -(2**63)),
    "a.int.big": (AnyValue(int_value=2**63 - 1), 2**63 - 1),
    "a.double": (AnyValue(double_value=3.25), 3.25),
    "a.bytes": (AnyValue(bytes_value=b"\x00\xffbin"), base64.b64encode(b"\x00\xffbin").decode()),
}


def _array(*values: AnyValue) -> AnyValue:
    value = AnyValue()
    value.array_value.values.extend(values)
    return value


def _kvlist(**values: AnyValue) -> AnyValue:
    value = AnyValue()
    value.kvlist_value.values.extend(KeyValue(key=k, value=v) for k, v in values.items())
    return value


EVERY_KIND["a.array"] = (
    _array(AnyValue(string_value="x"), AnyValue(int_value=2), AnyValue(bool_value=False)),
    ["x", 2, False])
EVERY_KIND["a.kvlist"] = (
    _kvlist(inner=AnyValue(string_value="v"), nested=_array(AnyValue(double_value=0.5))),
    {"inner": "v", "nested": [0.5]})


def attributes_pb(values: dict[str, AnyValue]) -> list[KeyValue]:
    return [KeyValue(key=k, value=v) for k, v in values.items()]


def collector_request(trace_id: str, base_ns: int = 1_763_000_000_000_000_000
                      ) -> tuple[ExportTraceServiceRequest, list[dict[str, Any]]]:
    """A request shaped like what a Collector forwards: two resources, several scopes,
    every span kind and status, every AnyValue kind; and the spans it describes."""
    request = ExportTraceServiceRequest()
    sent: list[dict[str, Any]] = []
    resources = [
        {"service.name": AnyValue(string_value="checkout"),
         "k8s.pod.name": AnyValue(string_value="checkout-7d9f"),
         "host.cpus": AnyValue(int_value=8)},
        {"service.name": AnyValue(string_value="billing"),
         "deployment.environment.name": AnyValue(string_value="prod")},
    ]
    number = 0
    for r_index, resource in enumerate(resources):
        resource_spans = request.resource_spans.add()
        resource_spans.resource.attributes.extend(attributes_pb(resource))
        for scope in (f"scope-{r_index}-a", f"scope-{r_index}-b"):
            scope_spans = resource_spans.scope_spans.add()
            scope_spans.scope.name = scope
            scope_spans.scope.version = "1.0"
            for kind in (1, 2, 3, 4, 5):
                number += 1
                span_id = f"{number:016x}"
                parent = "" if number == 1 else f"{1:016x}"
                attributes = {k: v for k, (v, _) in EVERY_KIND.items()}
                attributes["http.request.method"] = AnyValue(string_value="GET")
                span = scope_spans.spans.add(
                    trace_id=bytes.fromhex(trace_id), span_id=bytes.fromhex(span_id),
                    parent_span_id=bytes.fromhex(parent), name=f"op-{number}", kind=kind,
                    start_time_unix_nano=base_ns + number * 1_000_123,
                    end_time_unix_nano=base_ns + number * 1_000_123 + 987_654_321)
                span.attributes.extend(attributes_pb(attributes))
                span.status.code = number % 3
                span.status.message = "failed" if number % 3 == 2 else ""
                sent.append({
                    "trace_id": trace_id, "span_id": span_id, "parent_span_id": parent,
                    "name": f"op-{number}", "kind": kind, "start_ns": span.start_time_unix_nano,
                    "end_ns": span.end_time_unix_nano, "status_code": number % 3,
                    "status_message": span.status.message, "scope_name": scope,
                    "resource": {k: _stored(v) for k, v in resource.items()},
                    "attributes": {**{k: s for k, (_, s) in EVERY_KIND.items()},
                                   "http.request.method": "GET"},
                })
    return request, sent


def _stored(value: AnyValue) -> Any:
    for stored_pb, stored in EVERY_KIND.values():
        if stored_pb == value:
            return stored
    return json.loads(json.dumps(getattr(value, value.WhichOneof("value") or "string_value")))


def span_pb(trace_id: str, span_id: str, name: str = "op") -> trace_pb2.Span:
    return trace_pb2.Span(trace_id=bytes.fromhex(trace_id), span_id=bytes.fromhex(span_id),
                          name=name, kind=trace_pb2.Span.SPAN_KIND_SERVER,
                          start_time_unix_nano=1_000, end_time_unix_nano=2_000)


def request_of(*spans: trace_pb2.Span, service: str = "svc") -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.add(key="service.name",
                                           value=AnyValue(string_value=service))
    resource_spans.scope_spans.add().spans.extend(spans)
    return request


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def stored_spans(server: Server, trace_id: str) -> list[dict[str, Any]]:
    rows = server.query(
        "SELECT s.*, r.attributes AS resource_attributes FROM spans s "
        "JOIN resources r ON r.id = s.resource_id WHERE s.trace_id = :t ORDER BY s.span_id",
        t=bytes.fromhex(trace_id))
    out = []
    for row in rows:
        attributes, _ = spanbody.decode(bytes(row.body))
        out.append({
            "trace_id": bytes(row.trace_id).hex(), "span_id": bytes(row.span_id).hex(),
            "parent_span_id": bytes(row.parent_span_id).hex(), "name": row.name,
            "kind": row.kind, "start_ns": row.start_ns, "end_ns": row.end_ns,
            "status_code": row.status_code, "status_message": row.status_message,
            "scope_name": row.scope_name, "resource": _json(row.resource_attributes),
            "attributes": attributes,
        })
    return out


def assert_stored_as_sent(server: Server, sent: list[dict[str, Any]]) -> None:
    """Every span the client sent is stored exactly as sent, and nothing else."""
    assert sent, "the client sent no span"
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for span in sent:
        by_trace.setdefault(span["trace_id"], []).append(span)
    for trace_id, spans in by_trace.items():
        stored = stored_spans(server, trace_id)
        expected = sorted(({k: v for k, v in s.items() if k != "events"} for s in spans),
                          key=lambda s: s["span_id"])
        assert stored == expected


def random_trace_id() -> str:
    return os.urandom(16).hex()


def deflate_raw(data: bytes) -> bytes:
    """Deflate without the zlib wrapper, as some clients send `Content-Encoding: deflate`."""
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


# --- gRPC ------------------------------------------------------------------------

def grpc_auth(server: Server, **extra: str) -> tuple[tuple[str, str], ...]:
    """Call metadata with the server's key (and `extra` entries, e.g. traceparent)."""
    return (("authorization", f"Bearer {server.key}"), *extra.items())


def rpc_error(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value


def trailer(error: grpc.RpcError, key: str) -> Any:
    return dict(error.trailing_metadata() or ()).get(key)  # type: ignore[attr-defined]
