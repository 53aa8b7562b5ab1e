"""Metric points as the OTLP request that carries them upstream: one
ExportMetricsServiceRequest, grouped by resource, scope and metric, each point as
it arrived (cumulative stays cumulative: the upstream converts, as this collector's
store does)."""

from __future__ import annotations

import math
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from exporters.forward.otlp_groups import ScopeGroups
from model.otlp_values import fill_key_values
from model.records import (
    EXPONENTIAL_HISTOGRAM,
    GAUGE,
    HISTOGRAM,
    SUM,
    SUMMARY,
    MetricPoint,
)


def _exemplars(out: Any, point: MetricPoint) -> None:
    for e in point.exemplars:
        added = out.exemplars.add(time_unix_nano=e["time_ns"])
        if isinstance(e["value"], int):
            added.as_int = e["value"]
        else:
            added.as_double = e["value"]
        if e["trace_id"]:
            added.trace_id = bytes.fromhex(e["trace_id"])
        if e["span_id"]:
            added.span_id = bytes.fromhex(e["span_id"])
        fill_key_values(added.filtered_attributes, e["attributes"], depth=6)


def _fill(data: Any, p: MetricPoint) -> None:
    out = data.data_points.add(start_time_unix_nano=p.start_ns, time_unix_nano=p.time_ns,
                               flags=p.flags)
    fill_key_values(out.attributes, p.attributes, depth=6)
    kind = p.kind
    if kind in (GAUGE, SUM):
        if isinstance(p.value, int):
            out.as_int = p.value
        else:
            out.as_double = math.nan if p.value is None else p.value
    elif kind == SUMMARY:
        out.count = p.count
        out.sum = 0.0 if p.sum is None else p.sum
        for q, v in p.quantiles:
            out.quantile_values.add(quantile=q, value=v)
        return
    else:
        out.count = p.count
        for name in ("sum", "min", "max"):
            value = getattr(p, name)
            if value is not None:
                setattr(out, name, value)
        if kind == HISTOGRAM:
            out.explicit_bounds.extend(p.bounds)
            out.bucket_counts.extend(p.bucket_counts)
        else:
            out.scale, out.zero_count = p.scale, p.zero_count
            out.zero_threshold = p.zero_threshold
            # Set only when they hold something, as the sender's (unset) message had them.
            if p.positive_offset or p.positive_counts:
                out.positive.offset = p.positive_offset
                out.positive.bucket_counts.extend(p.positive_counts)
            if p.negative_offset or p.negative_counts:
                out.negative.offset = p.negative_offset
                out.negative.bucket_counts.extend(p.negative_counts)
    _exemplars(out, p)


_FIELDS = {GAUGE: "gauge", SUM: "sum", HISTOGRAM: "histogram",
           EXPONENTIAL_HISTOGRAM: "exponential_histogram", SUMMARY: "summary"}


def encode_metrics(points: list[MetricPoint]) -> tuple[ExportMetricsServiceRequest, int]:
    """(the request, points that could not be encoded)."""
    request = ExportMetricsServiceRequest()
    groups = ScopeGroups(request.resource_metrics, "scope_metrics")
    metrics: dict[tuple[Any, ...], Any] = {}
    failed = 0
    for p in points:
        scope_metrics = groups.scope_of(p, p.scope_version)
        metric_key = (id(scope_metrics), p.name, p.unit, p.description, p.kind, p.temporality,
                      p.monotonic)
        metric = metrics.get(metric_key)
        if metric is None:
            metric = metrics[metric_key] = scope_metrics.metrics.add(
                name=p.name, unit=p.unit, description=p.description)
            data = getattr(metric, _FIELDS[p.kind])
            data.SetInParent()
            if p.kind in (SUM, HISTOGRAM, EXPONENTIAL_HISTOGRAM):
                data.aggregation_temporality = p.temporality
            if p.kind == SUM:
                data.is_monotonic = p.monotonic
        data = getattr(metric, _FIELDS[p.kind])
        try:
            _fill(data, p)
        except (ValueError, TypeError):  # values nested past what protobuf reads back
            del data.data_points[-1]
            failed += 1
    return request, failed
