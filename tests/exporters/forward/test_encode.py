"""The forwarding exporter's encoding (exporters/forward/encode.py), read back with
the receivers' own pure decoders: what the gateway decodes is what this collector
decoded."""

from __future__ import annotations

import gzip
import pickle

import orjson
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
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
from model.records import Batch, Deploy, ErrorEvent, LogRecord, RequestMetric, SourceContext
from receiver.custom.decode import decode_deploy, decode_error_batch, decode_request_batch
from receiver.otlp.decode_logs import decode_logs_body
from receiver.otlp.decode_metrics import decode_metrics_body
from receiver.otlp.decode_traces import decode_traces_body
from tests.exporters.senders import trace_request
from tests.receiver.logs_helpers import log_pb, logs_request
from tests.receiver.metrics_helpers import collector_request

ALL = {"signals": ["deploys", "errors", "logs", "requests", "traces"], "gzip": True}
NOW_NS = 1_795_168_800_999_000_000


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


def logs_of(body: bytes) -> Batch:
    decoded = decode_logs_body(body, True, NOW_NS)
    assert decoded.dropped == 0
    return Batch(1, logs=decoded.logs)


def test_untouched_log_records_are_sent_as_they_came() -> None:
    first = log_pb("ab" * 16, "one", observed_time_unix_nano=5, dropped_attributes_count=2)
    first.attributes.add(key="k").value.int_value = 7
    original = logs_request(first, log_pb("cd" * 16, "two"), service="shop")
    original.resource_logs[0].scope_logs[0].scope.version = "9"  # not in the record
    batch = logs_of(original.SerializeToString())
    (entry,) = encode(batch, ALL).entries
    assert (entry.signal, entry.content_type, entry.content_encoding, entry.records) == (
        "logs", "application/x-protobuf", "gzip", 2)
    sent = ExportLogsServiceRequest.FromString(gzip.decompress(entry.body))
    original.resource_logs[0].scope_logs[0].scope.version = ""
    # Every record byte for byte, the unset observed time of the second one included:
    # a retried request is the same record upstream.
    assert sent == original
    again = decode_logs_body(gzip.decompress(entry.body), True, NOW_NS).logs
    assert [(r.body, r.attributes, r.service_name, r.scope_name, r.observed_ns)
            for r in again] == [("one", {"k": 7}, "shop", "lib", 5), ("two", {}, "shop", "lib",
                                                                     NOW_NS)]


def test_changed_log_records_are_sent_as_changed() -> None:
    batch = logs_of(logs_request(log_pb("ab" * 16, "secret", flags=1)).SerializeToString())
    record = batch.logs[0]
    record.body = {"redacted": True}
    record.attributes = {"added": [1, "x"]}
    record.severity_text, record.span_id, record.service_name = "WARN", "", "renamed"
    hand_made = LogRecord(3, 4, 17, "ERROR", "", "ef" * 8, 0, "ev", "other", "s", {},
                          attributes={"a": 1}, body=2.5)
    batch.logs.append(hand_made)
    (entry,) = encode(Batch(1, logs=batch.logs), {**ALL, "gzip": False}).entries
    first, second = decode_logs_body(entry.body, True, NOW_NS).logs
    assert (first.body, first.attributes, first.severity_text, first.span_id, first.flags,
            first.trace_id, first.service_name) == (
        {"redacted": True}, {"added": [1, "x"]}, "WARN", "", 1, "ab" * 16, "renamed")
    assert (second.time_ns, second.observed_ns, second.severity_number, second.span_id,
            second.event_name, second.attributes, second.body, second.scope_name) == (
        3, 4, 17, "ef" * 8, "ev", {"a": 1}, 2.5, "s")


def test_a_log_record_that_cannot_be_encoded_is_counted_and_the_rest_sent() -> None:
    batch = logs_of(logs_request(log_pb("ab" * 16, "kept")).SerializeToString())
    bad = LogRecord(1, 1, 9, "", "not hex", "", 0, "", "svc", "", {})
    encoded = encode(Batch(1, logs=[bad, *batch.logs]), ALL)
    assert encoded.unencodable == {"logs": 1}
    (entry,) = encoded.entries
    assert entry.records == 1


def test_errors_deploys_requests_round_trip_through_the_gateway_decoders() -> None:
    error = ErrorEvent("fp-1", "KeyError", "boom", ["a.py:1", "b.py:2"], 1_795_464_271_000_001,
                       request_id="r1", user_id="u1", params={"a": [1, {"b": None}]},
                       source_context=SourceContext("a.py", 1, "x = y", ["pre"], ["post"]),
                       trace_id="ab" * 16, span_id="cd" * 8, environment="prod",
                       release="1.2", service="shop", tags={"os": "Linux"}, level="warning",
                       exceptions=[{"type": "KeyError", "value": "'k'", "frames": [
                           {"filename": "a.py", "lineno": 1, "in_app": True,
                            "context_line": "x = y"}]}],
                       context={"user": {"id": "u1"}, "platform": "python"},
                       occurrence_key="ef" * 16)
    bare = ErrorEvent("fp-2", "E", "", [], 5)
    deploy = Deploy("abc123", 7, version="1.2", env="prod", deployer="me", description="d",
                    service="checkout")
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


def test_an_errors_long_resource_labels_are_cut_to_what_the_gateway_takes() -> None:
    error = ErrorEvent("fp", "E", "m", [], 5, service="s" * 300, environment="")
    (entry,) = encode(Batch(1, errors=[error]), {"signals": ["errors"], "gzip": False}).entries
    (forwarded,), rejected = decode_error_batch(orjson.loads(entry.body), now_us=0, link=None)
    assert rejected == []
    assert (forwarded.service, forwarded.environment) == ("s" * 200, None)


def test_a_level_outside_the_five_is_not_sent_so_the_gateway_keeps_the_error() -> None:
    error = ErrorEvent("fp", "E", "m", [], 5, level="verbose")
    (entry,) = encode(Batch(1, errors=[error]), {"signals": ["errors"], "gzip": False}).entries
    (forwarded,), rejected = decode_error_batch(orjson.loads(entry.body), now_us=0, link=None)
    assert rejected == [] and forwarded.level is None


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
