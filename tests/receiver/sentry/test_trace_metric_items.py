"""receiver/sentry/trace_metrics.py: Sentry's `trace_metric` items (as sentry-sdk 3 and
@sentry/node 11 send them: tests/receiver/sentry/telemetry_items.py) become metric
points of the OTLP kind that means the same; each point links its trace as an
exemplar; a bad metric drops alone."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporters.forward.encode_metrics import encode_metrics
from model.records import (
    EXPONENTIAL_HISTOGRAM,
    GAUGE,
    SUM,
    TEMPORALITY_DELTA,
    TEMPORALITY_UNSPECIFIED,
    Batch,
)
from receiver.otlp.decode_metrics import metrics_from_proto
from receiver.sentry.envelope import parse_envelope
from receiver.sentry.items import decode_envelope
from receiver.sentry.trace_metrics import (
    MAX_METRICS,
    SCALE,
    bucket_index,
    decode_metric_items,
)
from storage.queries.metric_buckets import BucketSum
from storage.wire import batch as wire
from storage.wire.points import buckets_json
from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.telemetry_items import (
    METRIC_HEADERS,
    NODE_METRICS,
    NODE_SPAN_ID,
    NODE_TRACE_ID,
    PYTHON_METRICS,
    SPAN_ID,
    TRACE_ID,
    TS,
)

NOW_US = 1_796_692_300_000_000


def test_counter_gauge_and_distribution_become_sum_gauge_and_exponential_histogram() -> None:
    decoded = decode_metric_items(PYTHON_METRICS, NOW_US)
    assert decoded.dropped == 0
    counter, gauge, distribution = decoded.metrics
    assert (counter.name, counter.kind, counter.temporality, counter.monotonic,
            counter.value, counter.unit) == ("orders.shipped", SUM, TEMPORALITY_DELTA, True,
                                             1.0, "")
    assert (gauge.name, gauge.kind, gauge.temporality, gauge.value, gauge.unit) == (
        "queue.depth", GAUGE, TEMPORALITY_UNSPECIFIED, 7.0, "item")
    assert (distribution.kind, distribution.temporality, distribution.unit) == (
        EXPONENTIAL_HISTOGRAM, TEMPORALITY_DELTA, "millisecond")
    assert (distribution.count, distribution.sum, distribution.min, distribution.max) == (
        1, 187.5, 187.5, 187.5)
    assert (distribution.scale, distribution.positive_counts) == (SCALE, [1])
    base = 2 ** (2 ** -SCALE)
    low = base ** distribution.positive_offset
    assert low < 187.5 <= low * base
    assert counter.time_ns == round(TS * 1_000_000) * 1000


def test_attributes_are_the_points_and_release_environment_sdk_the_resource() -> None:
    counter, gauge, _ = decode_metric_items(PYTHON_METRICS, NOW_US).metrics
    assert counter.attributes == {"region": "eu", "process.runtime.name": "CPython",
                                  "process.runtime.version": "3.11.7",
                                  "server.address": "vm"}
    assert counter.resource_attributes == {
        "service.name": "unknown_service:python", "service.version": "shop@1.2",
        "deployment.environment.name": "staging", "telemetry.sdk.name": "sentry.python.flask",
        "telemetry.sdk.version": "3.0.1"}
    assert counter.resource_attributes is gauge.resource_attributes
    assert counter.scope_name == "sentry"


def test_the_trace_is_the_points_exemplar_not_an_attribute() -> None:
    counter = decode_metric_items(PYTHON_METRICS, NOW_US).metrics[0]
    assert counter.exemplars == [{"time_ns": counter.time_ns, "value": 1.0,
                                  "trace_id": TRACE_ID, "span_id": SPAN_ID,
                                  "attributes": {}}]
    assert not {"trace_id", "span_id"} & set(counter.attributes)
    untraced = copy.deepcopy(PYTHON_METRICS)
    del untraced["items"][0]["trace_id"]
    assert decode_metric_items(untraced, NOW_US).metrics[0].exemplars == []


def test_a_node_counter_keeps_its_integer_and_not_its_sequence() -> None:
    [counter] = decode_metric_items(NODE_METRICS, NOW_US).metrics
    assert (counter.value, counter.service_name) == (2, "unknown_service:node")
    assert "sentry.timestamp.sequence" not in counter.attributes
    assert counter.exemplars[0]["trace_id"] == NODE_TRACE_ID
    assert counter.exemplars[0]["span_id"] == NODE_SPAN_ID


@pytest.mark.parametrize("value", [1.0, 2.0, 0.5, 1024.0, 187.5, 1e-9, 3e12, 1.0000001])
def test_a_value_lies_in_its_bucket(value: float) -> None:
    base_log2 = 2.0 ** -SCALE
    index = bucket_index(value)
    assert 2.0 ** (index * base_log2) < value <= 2.0 ** ((index + 1) * base_log2)


def test_distributions_of_one_series_add_up_to_its_percentiles() -> None:
    values = [float(v) for v in range(1, 101)]
    items = [{"timestamp": TS + i, "name": "checkout.ms", "type": "distribution",
              "value": v} for i, v in enumerate(values)]
    points = decode_metric_items({"items": items}, NOW_US).metrics
    total = BucketSum()
    for p in points:
        # As the store holds it and the Metrics page adds it up.
        assert total.add(p.count, p.sum, p.min, p.max, json.loads(buckets_json(p) or ""))
    for q, expected in ((0.5, 50.0), (0.95, 95.0), (0.99, 99.0)):
        found = total.quantile(q)
        assert found is not None and math.isclose(found, expected, rel_tol=0.003)


def test_zero_and_negative_distributions_have_their_buckets() -> None:
    items = [{"timestamp": TS, "name": "d", "type": "distribution", "value": v}
             for v in (0, -4.0)]
    zero, negative = decode_metric_items({"items": items}, NOW_US).metrics
    assert (zero.zero_count, zero.positive_counts, zero.negative_counts) == (1, (), ())
    assert (negative.negative_offset, negative.negative_counts) == (bucket_index(4.0), [1])


def test_a_bad_metric_drops_alone_with_its_reason() -> None:
    good = PYTHON_METRICS["items"][0]
    bad: list[Any] = [
        "x", {"type": "counter", "value": 1}, {"name": "n", "type": "set", "value": 1},
        {"name": "n", "type": "gauge", "value": "1"}, {"name": "n", "type": "gauge",
                                                       "value": True},
        {"name": "n", "type": "gauge", "value": math.inf}]
    decoded = decode_metric_items({"items": [good, *bad]}, NOW_US)
    assert len(decoded.metrics) == 1 and decoded.dropped == len(bad)
    assert decoded.reasons == [
        "items[1]: a metric must be an object", "items[2]: name must be a non-empty string",
        "items[3]: type must be one of counter, gauge, distribution",
        "items[4]: value must be a number", "items[5]: value must be a number",
        "items[6]: value must be finite"]
    one = {"name": "n", "type": "gauge", "value": 1}
    many = decode_metric_items({"items": [one] * (MAX_METRICS + 2)}, NOW_US)
    assert (len(many.metrics), many.dropped) == (MAX_METRICS, 2)
    [undated] = decode_metric_items({"items": [one]}, NOW_US).metrics
    assert undated.time_ns == NOW_US * 1000


def test_points_are_stored_and_forwarded_with_their_exemplar() -> None:
    batch = Batch(project_id=1, metrics=decode_metric_items(PYTHON_METRICS, NOW_US).metrics)
    stored = wire.encode_batch(batch)
    assert len(stored.metrics) == 3 and len(stored.metric_series) == 3
    request, failed = encode_metrics(batch.metrics)
    assert failed == 0
    again = metrics_from_proto(request).metrics
    assert [(p.name, p.kind, p.temporality) for p in again] == [
        (p.name, p.kind, p.temporality) for p in batch.metrics]
    assert [p.exemplars[0]["trace_id"] for p in again] == [TRACE_ID] * 3
    assert again[2].positive_offset == batch.metrics[2].positive_offset


def test_in_an_envelope_a_metric_item_that_cannot_be_read_drops_alone() -> None:
    body = envelope({}, [item("trace_metric", PYTHON_METRICS, item_count=3, **METRIC_HEADERS),
                         item("trace_metric", b"\xff", **METRIC_HEADERS)])
    decoded = decode_envelope(parse_envelope(body), NOW_US, body)
    assert len(decoded.metrics) == 3
    assert decoded.drops()["metrics"] == 1 and decoded.dropped == 1


ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
    | st.sampled_from(["counter", "gauge", "distribution", TRACE_ID]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["timestamp", "name", "type", "value", "unit", "trace_id",
                         "attributes"]), inner, max_size=6), max_leaves=15)


@settings(max_examples=200, deadline=None)
@given(st.lists(ANY_JSON, max_size=4))
def test_never_raises_whatever_a_metric_holds(metrics: list[Any]) -> None:
    decoded = decode_metric_items({"items": metrics}, NOW_US)
    assert len(decoded.metrics) + decoded.dropped == len(metrics)
    wire.encode_batch(Batch(project_id=1, metrics=decoded.metrics))
