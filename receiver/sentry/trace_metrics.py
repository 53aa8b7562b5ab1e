"""Sentry's trace metrics (a `trace_metric` item, content type
application/vnd.sentry.items.trace-metric+json) become metric points, stored as an OTLP
point is. Pure: a parsed JSON object in, records out.

`sentry_sdk.metrics.count/gauge/distribution` and @sentry/node's `Sentry.metrics`
send each call as it was made, not aggregated: `{"version": 2, "items": [...]}`, each
with `timestamp` (seconds), `name`, `type` (counter, gauge, distribution), `value`,
an optional `unit`, `trace_id` and `span_id` (the span it was made in) and typed
`attributes` read as streamed spans' are (receiver/sentry/typed_attributes.py;
receiver/sentry/resource.py: release, environment and SDK become the resource, the
service is read as for a span).

Each call is one point of the OTLP kind that means what the call means, so that the
store and the Metrics page read it as they read an OpenTelemetry SDK's:

- counter: a delta monotonic sum of `value`. A call adds `value` to the count, and
  the page adds a delta series' points up (sum, rate);
- gauge: a gauge of `value`, a value at a time (last, avg, min, max);
- distribution: a delta exponential histogram of the one value (count 1, sum, min
  and max the value, one bucket at scale 8). The page reads p50/p95/p99 from
  buckets, and exponential buckets need no bounds chosen in advance: the points of a
  series add up bucket by bucket into the histogram of all its values, whose
  percentiles are then right to 0.3 % (a bucket's width at scale 8). An explicit
  histogram without buckets would give only the count and the sum.

The trace link (`trace_id`, `span_id`) is the point's exemplar, as OTLP links a point
to a trace: forwarded upstream with it (exporters/forward), stored a few a series a
minute (storage/wire/points.py), and not an attribute, which would make every trace a series of
its own: a counter called once a request would then have as many series as
requests, past what the Metrics page reads of one metric (2000 series). The
`sentry.timestamp.sequence` attribute (@sentry/node's order of records made within
one millisecond) is not kept, for the same reason.

Nothing here raises for a field: a metric that is not an object, has no name, a type
that is none of the three, or a value that is not a finite number is dropped alone,
counted with its reason in the returned DecodedMetrics, the rest kept.
"""

from __future__ import annotations

import math
from typing import Any

from model.records import (
    EXPONENTIAL_HISTOGRAM,
    GAUGE,
    SUM,
    TEMPORALITY_DELTA,
    TEMPORALITY_UNSPECIFIED,
    MetricPoint,
)
from receiver.otlp.json_rules import Drop
from receiver.otlp.metric_points import DecodedMetrics
from receiver.sentry.resource import ON_THE_RESOURCE, Resources, resource_of
from receiver.sentry.span_attributes import (
    MAX_NAME,
    SCOPE,
    Attributes,
    read_items,
)
from receiver.sentry.typed_attributes import plain_attributes
from receiver.sentry.values import hex_id, text, time_us

# The metrics of one `trace_metric` item, at most (the SDKs send batches of 100).
MAX_METRICS = 1000
# The scale of a distribution's one bucket: base 2**(2**-8), each bucket 0.27 % wide.
SCALE = 8
_BASE_LOG2 = 2.0 ** -SCALE
_NOT_ON_THE_POINT = frozenset({*ON_THE_RESOURCE, "sentry.timestamp.sequence"})
TYPES = ("counter", "gauge", "distribution")


def bucket_index(value: float) -> int:
    """The index of the exponential bucket at SCALE holding `value` > 0: bucket i is
    (base**i, base**(i+1)], as OTLP defines it. log2 rounds, so the neighbour is
    checked where the answer lies on a bucket's edge (a power of two, at SCALE)."""
    index = math.ceil(math.log2(value) / _BASE_LOG2) - 1
    if 2.0 ** ((index + 1) * _BASE_LOG2) < value:
        index += 1
    elif 2.0 ** (index * _BASE_LOG2) >= value:
        index -= 1
    return index


def _number(value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Drop("value must be a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise Drop("value must be finite")
    return value


def _metric(item: Any, now_us: int, known: Resources) -> MetricPoint:
    if not isinstance(item, dict):
        raise Drop("a metric must be an object")
    name = text(item.get("name"), MAX_NAME)
    if name is None or not isinstance(item.get("name"), str):
        raise Drop("name must be a non-empty string")
    kind = item.get("type")
    if kind not in TYPES:
        raise Drop(f"type must be one of {', '.join(TYPES)}")
    value = _number(item.get("value"))
    ts_us = time_us(item.get("timestamp"))
    time_ns = (now_us if ts_us is None else ts_us) * 1000
    sent = plain_attributes(item.get("attributes"))
    resource = resource_of(sent, known)
    attributes = Attributes()
    attributes.put_all({k: v for k, v in sent.items() if k not in _NOT_ON_THE_POINT})
    trace_id = hex_id(item.get("trace_id"), 32)
    exemplars: list[dict[str, Any]] = []
    if trace_id:
        exemplars.append({"time_ns": time_ns, "value": value, "trace_id": trace_id,
                          "span_id": hex_id(item.get("span_id"), 16) or "",
                          "attributes": {}})
    point = MetricPoint(
        name=name, unit=text(item.get("unit")) or "", description="", kind=GAUGE,
        temporality=TEMPORALITY_UNSPECIFIED, monotonic=False,
        service_name=str(resource["service.name"]), resource_attributes=resource,
        scope_name=SCOPE, attributes=attributes.values, start_ns=0, time_ns=time_ns,
        exemplars=exemplars)
    if kind == "gauge":
        point.value = value
    elif kind == "counter":
        point.kind, point.temporality, point.monotonic = SUM, TEMPORALITY_DELTA, True
        point.value = value
    else:
        _one_value_histogram(point, float(value))
    return point


def _one_value_histogram(point: MetricPoint, value: float) -> None:
    point.kind, point.temporality = EXPONENTIAL_HISTOGRAM, TEMPORALITY_DELTA
    point.count, point.sum, point.min, point.max = 1, value, value, value
    point.scale = SCALE
    if value > 0:
        point.positive_offset, point.positive_counts = bucket_index(value), [1]
    elif value < 0:
        point.negative_offset, point.negative_counts = bucket_index(-value), [1]
    else:
        point.zero_count = 1


def decode_metric_items(payload: Any, now_us: int) -> DecodedMetrics:
    """The points of one `trace_metric` item, in the order sent; those that could not
    be kept are counted in `dropped` with their reasons (`items[i]: ...`). `now_us`
    dates a metric sent without its time."""
    out = DecodedMetrics()
    read_items(payload, "trace_metric", out, lambda item, known: _metric(item, now_us, known),
               out.metrics, MAX_METRICS)
    return out
