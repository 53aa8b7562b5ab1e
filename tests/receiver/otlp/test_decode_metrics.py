"""receiver/otlp/decode_metrics.py: OTLP metrics, protobuf and OTLP/JSON, to MetricPoint
records; a bad point dropped alone, a body that is not OTLP refused."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from hypothesis import given, settings
from hypothesis import strategies as st

from model.errors import InvalidInput
from model.records import TEMPORALITY_CUMULATIVE, TEMPORALITY_DELTA, Batch
from receiver.otlp.decode_metrics import decode_metrics_body
from storage.wire import batch
from tests.receiver.metrics_helpers import T0, S, collector_request


def _shape(points: list[Any]) -> list[tuple[Any, ...]]:
    return [(p.name, p.kind, p.temporality, p.monotonic, p.service_name, p.scope_name,
             p.attributes, p.start_ns, p.time_ns, p.value, p.count, p.sum, p.min, p.max,
             p.bounds, p.bucket_counts, p.scale, p.zero_count, p.positive_offset,
             p.positive_counts, p.quantiles, p.exemplars) for p in points]


def test_every_kind_of_point_from_protobuf() -> None:
    decoded = decode_metrics_body(collector_request().SerializeToString(), True)
    assert decoded.dropped == 0
    by_name = {p.name: p for p in decoded.metrics}
    assert list(by_name) == ["system.memory.utilization", "system.network.io",
                             "http.server.request.duration", "rpc.server.duration",
                             "legacy.latency"]
    gauge, total, hist, exp, summary = by_name.values()
    assert (gauge.kind, gauge.value, gauge.attributes, gauge.unit, gauge.description) == (
        "gauge", 0.42, {"state": "used"}, "1", "Memory in use")
    assert (total.kind, total.temporality, total.monotonic, total.value) == (
        "sum", TEMPORALITY_CUMULATIVE, True, 1234)
    assert total.exemplars == [{"time_ns": T0 + 60 * S, "value": 5,
                                "trace_id": bytes(range(16)).hex(),
                                "span_id": bytes(range(8)).hex(),
                                "attributes": {"host": "a"}}]
    assert (hist.count, hist.sum, hist.min, hist.max, hist.bounds, hist.bucket_counts) == (
        6, 1.5, 0.004, 0.9, [0.005, 0.1, 0.5], [1, 3, 1, 1])
    assert (exp.temporality, exp.scale, exp.zero_count, exp.positive_offset,
            exp.positive_counts) == (TEMPORALITY_DELTA, 3, 1, 10, [1, 0, 3])
    assert summary.quantiles == [(0.5, 4.0), (0.99, 20.0)] and summary.count == 10
    assert {p.service_name for p in decoded.metrics} == {"checkout"}
    assert {p.scope_name for p in decoded.metrics} == {"otelcol/hostmetrics"}
    # One resource dict shared by its points (stored once).
    assert len({id(p.resource_attributes) for p in decoded.metrics}) == 1


def test_otlp_json_decodes_to_the_same_points() -> None:
    request = collector_request()
    # As the OTLP/JSON encoding writes it: ids hex (protobuf JSON would write base64),
    # 64-bit integers as strings, enums as numbers.
    document = MessageToDict(request)
    exemplar = document["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][1]["sum"][
        "dataPoints"][0]["exemplars"][0]
    exemplar["traceId"], exemplar["spanId"] = bytes(range(16)).hex(), bytes(range(8)).hex()
    for metric in document["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]:
        for data in metric.values():
            if isinstance(data, dict) and "aggregationTemporality" in data:
                data["aggregationTemporality"] = {
                    "AGGREGATION_TEMPORALITY_CUMULATIVE": 2,
                    "AGGREGATION_TEMPORALITY_DELTA": 1}[data["aggregationTemporality"]]
    from_json = decode_metrics_body(json.dumps(document).encode(), False)
    from_proto = decode_metrics_body(request.SerializeToString(), True)
    assert from_json.dropped == 0
    assert _shape(from_json.metrics) == _shape(from_proto.metrics)


def _json_sum(point: dict[str, Any], temporality: Any = 2) -> bytes:
    return json.dumps({"resourceMetrics": [{"scopeMetrics": [{"metrics": [{
        "name": "n", "sum": {"aggregationTemporality": temporality, "isMonotonic": True,
                             "dataPoints": [point]}}]}]}]}).encode()


def test_json_numbers_strings_and_enum_names() -> None:
    decoded = decode_metrics_body(_json_sum(
        {"asInt": "9007199254740993", "startTimeUnixNano": str(T0),
         "timeUnixNano": T0 + S}, "AGGREGATION_TEMPORALITY_DELTA"), False)
    (p,) = decoded.metrics
    assert (p.value, p.temporality, p.start_ns, p.service_name) == (
        9007199254740993, TEMPORALITY_DELTA, T0, "unknown_service")
    (nan,) = decode_metrics_body(_json_sum({"asDouble": "NaN", "timeUnixNano": 5}),
                                 False).metrics
    assert math.isnan(nan.value)


@pytest.mark.parametrize(("point", "reason"), [
    ({"asInt": 1}, "timeUnixNano must be set"),
    ({"asInt": 1, "timeUnixNano": str(2**64)}, "timeUnixNano"),
    ({"asInt": "x", "timeUnixNano": 1}, "asInt must be an integer"),
    ({"asInt": 1, "timeUnixNano": 1, "exemplars": [{"traceId": "zz"}]}, "exemplar traceId"),
    ({"asInt": 1, "timeUnixNano": 1, "attributes": [{"value": {}}]}, "string key"),
])
def test_a_bad_point_is_dropped_alone(point: dict[str, Any], reason: str) -> None:
    good = {"asInt": 2, "timeUnixNano": 7}
    body = json.dumps({"resourceMetrics": [{"scopeMetrics": [{"metrics": [{
        "name": "n", "gauge": {"dataPoints": [point, good]}}]}]}]}).encode()
    decoded = decode_metrics_body(body, False)
    assert [p.value for p in decoded.metrics] == [2]
    assert decoded.dropped == 1
    assert decoded.reasons[0].startswith(
        "resourceMetrics[0].scopeMetrics[0].metrics[0].dataPoints[0]: ")
    assert reason in decoded.reasons[0]


def test_bad_histograms_are_dropped() -> None:
    request = collector_request()
    hist = request.resource_metrics[0].scope_metrics[0].metrics[2].histogram
    hist.data_points[0].bucket_counts.append(1)  # one more than bounds + 1
    exp = request.resource_metrics[0].scope_metrics[0].metrics[3].exponential_histogram
    exp.data_points[0].scale = 21
    decoded = decode_metrics_body(request.SerializeToString(), True)
    assert decoded.dropped == 2 and len(decoded.metrics) == 3
    assert "bucketCounts" in decoded.reasons[0] and "scale" in decoded.reasons[1]


@pytest.mark.parametrize(("body", "protobuf"), [
    (b"\xff\xff\xff", True), (b"[]", False), (b'{"resourceMetrics": 3}', False),
    (b'{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"sum": []}]}]}]}', False),
])
def test_a_body_that_is_not_otlp_is_invalid(body: bytes, protobuf: bool) -> None:
    with pytest.raises(InvalidInput):
        decode_metrics_body(body, protobuf)


def _damaged(body: bytes, at: int, byte: int, cut: int) -> bytes:
    at = at % max(len(body), 1)
    return (body[:at] + bytes([byte]) + body[at + 1:])[:max(cut, 1)]


@settings(max_examples=300, deadline=None)
@given(at=st.integers(0, 10_000), byte=st.integers(0, 255), cut=st.integers(0, 10_000))
def test_damaged_protobuf_is_refused_or_decoded_and_storable(at: int, byte: int,
                                                            cut: int) -> None:
    """Whatever a damaged request decodes to is storable: the wire form (storage's
    checks) takes every point, or drops one alone, and never raises."""
    body = _damaged(collector_request().SerializeToString(), at, byte, cut)
    try:
        decoded = decode_metrics_body(body, True)
    except InvalidInput:
        return
    encoded = batch.encode(Batch(1, metrics=decoded.metrics))
    assert encoded.counts["metrics"] + encoded.unencodable.get("metrics", 0) == len(
        decoded.metrics)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3), max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(["asInt", "asDouble", "timeUnixNano", "startTimeUnixNano",
                              "count", "sum", "bucketCounts", "explicitBounds", "scale",
                              "positive", "flags", "attributes", "exemplars",
                              "quantileValues", "zeroCount"]),
       kind=st.sampled_from(["gauge", "sum", "histogram", "exponentialHistogram", "summary"]),
       value=_JSON_VALUES)
def test_any_json_field_value_is_refused_or_decoded_and_storable(field: str, kind: str,
                                                                value: Any) -> None:
    point = {"timeUnixNano": "5", "asInt": 1, field: value}
    body = json.dumps({"resourceMetrics": [{"scopeMetrics": [{"metrics": [{
        "name": "n", kind: {"aggregationTemporality": 2, "dataPoints": [point]}}]}]}]})
    try:
        decoded = decode_metrics_body(body.encode(), False)
    except InvalidInput:
        return
    encoded = batch.encode(Batch(1, metrics=decoded.metrics))
    assert encoded.counts["metrics"] + encoded.unencodable.get("metrics", 0) == len(
        decoded.metrics)
