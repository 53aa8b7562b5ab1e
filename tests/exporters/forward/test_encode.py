"""The forwarding exporter's encoding (exporters/forward/encode.py), read back with
the receivers' own pure decoders: what the gateway decodes is what this collector
decoded."""

from __future__ import annotations

import gzip
import pickle

import orjson
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from exporters.forward.encode import (
    MAX_ERRORS_PER_BODY,
    encode,
    iso_us,
    prepare,
)
from receiver.decode_custom import decode_deploy, decode_error_batch, decode_request_batch
from receiver.decode_otlp import decode_traces_body
from receiver.decode_otlp_metrics import decode_metrics_body
from sounding.records import Batch, Deploy, ErrorEvent, RequestMetric, SourceContext
from tests.exporters.senders import trace_request
from tests.receiver.metrics_helpers import collector_request

ALL = {"signals": ["deploys", "errors", "requests", "traces"], "gzip": True}


def spans_of(body: bytes) -> Batch:
    decoded = decode_traces_body(body, True)
    assert decoded.dropped == 0
    return Batch(1, spans=decoded.spans)


def test_iso_us_is_exact_to_the_microsecond() -> None:
    assert iso_us(0) == "1970-01-01T00:00:00.000000Z"
    assert iso_us(1_795_464_271_123_457) == "2026-11-23T20:04:31.123457Z"


def test_untouched_spans_round_trip_with_everything_they_carried() -> None:
    original = ExportTraceServiceRequest.FromString(trace_request(bytes(range(16)), spans=3))
    original.resource_spans[0].scope_spans[0].spans[1].events.add(name="exception")
    original.resource_spans[0].scope_spans[0].spans[2].links.add(trace_id=bytes(16))
    batch = spans_of(original.SerializeToString())
    (entry,) = encode(batch, ALL).entries
    assert (entry.signal, entry.content_type, entry.content_encoding, entry.records) == (
        "traces", "application/x-protobuf", "gzip", 3)
    sent = ExportTraceServiceRequest.FromString(gzip.decompress(entry.body))
    assert sent == original  # ids, times, attributes, events, links, resource, scope
    again = decode_traces_body(gzip.decompress(entry.body), True).spans
    assert [(s.trace_id, s.span_id, s.name, s.kind, s.service_name, s.scope_name)
            for s in again] == [(s.trace_id, s.span_id, s.name, s.kind, s.service_name,
                                 s.scope_name) for s in batch.spans]


def test_changed_spans_are_sent_as_changed() -> None:
    batch = spans_of(trace_request(bytes(range(16)), spans=2))
    batch.spans[0].name = "renamed"
    batch.spans[0].attributes = {"http.route": "/x", "n": 3}
    batch.spans[1].service_name = "other"
    sent = decode_traces_body(encode(batch, {**ALL, "gzip": False}).entries[0].body, True)
    by_id = {s.span_id: s for s in sent.spans}
    first, second = by_id[batch.spans[0].span_id], by_id[batch.spans[1].span_id]
    assert first.name == "renamed" and first.attributes == {"http.route": "/x", "n": 3}
    assert first.service_name == "durability" and second.service_name == "other"


def test_errors_deploys_requests_round_trip_through_the_gateway_decoders() -> None:
    error = ErrorEvent("fp-1", "KeyError", "boom", ["a.py:1", "b.py:2"], 1_795_464_271_000_001,
                       request_id="r1", user_id="u1", params={"a": [1, {"b": None}]},
                       source_context=SourceContext("a.py", 1, "x = y", ["pre"], ["post"]),
                       trace_id="ab" * 16, span_id="cd" * 8)
    bare = ErrorEvent("fp-2", "E", "", [], 5)
    deploy = Deploy("abc123", 7, version="1.2", env="prod", deployer="me", description="d")
    request = RequestMetric("GET", "/users/:id", 200, 12.5, 9, service="api", env="prod",
                            request_id="r2", trace_id="ef" * 16)
    batch = Batch(1, errors=[error, bare], deploys=[deploy, Deploy("def", 8)],
                  requests=[request, RequestMetric("POST", "/", 500, 1.0, 10)])
    entries = {e.signal: [] for e in encode(batch, ALL).entries}
    for e in encode(batch, ALL).entries:
        assert e.content_type == "application/json" and e.content_encoding == "gzip"
        entries[e.signal].append(orjson.loads(gzip.decompress(e.body)))
    errors, rejected = decode_error_batch(entries["errors"][0], now_us=0, link=None)
    assert rejected == [] and errors == [error, bare]
    assert [decode_deploy(d, now_us=0) for d in entries["deploys"]] == [deploy, Deploy("def", 8)]
    requests, rejected = decode_request_batch(entries["requests"][0], now_us=0, link=None)
    assert rejected == [] and requests == batch.requests


def test_signals_not_forwarded_are_not_encoded_and_large_batches_are_split() -> None:
    errors = [ErrorEvent(f"fp{i}", "E", "m", [], i) for i in range(MAX_ERRORS_PER_BODY + 1)]
    batch = Batch(1, errors=errors, deploys=[Deploy("a", 1)],
                  spans=spans_of(trace_request(bytes(range(16)), spans=1)).spans)
    encoded = encode(batch, {"signals": ["errors"], "gzip": False})
    assert [(e.signal, e.records) for e in encoded.entries] == [
        ("errors", MAX_ERRORS_PER_BODY), ("errors", 1)]
    assert encoded.records == MAX_ERRORS_PER_BODY + 1
    assert encode(Batch(1), ALL).entries == []


def test_preparation_pickles_and_leaves_the_batch_as_it_was() -> None:
    batch = spans_of(trace_request(bytes(range(16)), spans=2))
    prepared = pickle.loads(pickle.dumps(prepare(batch, ALL)))
    assert prepared.records == 2 and prepared.unencodable == {}
    assert all(span.untouched for span in batch.spans)


def test_metrics_are_sent_as_they_arrived() -> None:
    original = collector_request()
    decoded = decode_metrics_body(original.SerializeToString(), True)
    batch = Batch(1, metrics=decoded.metrics)
    (entry,) = encode(batch, {"signals": ["metrics"], "gzip": True}).entries
    assert (entry.signal, entry.content_type, entry.records) == (
        "metrics", "application/x-protobuf", 5)
    sent = ExportMetricsServiceRequest.FromString(gzip.decompress(entry.body))
    # Every point, metric, scope and resource as the Collector sent them, cumulative
    # histogram and sum still cumulative.
    assert sent == original
