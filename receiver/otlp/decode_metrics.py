"""Pure decode functions for OTLP metrics: protobuf and OTLP/JSON in, MetricPoint
records out, by the same rules as traces (receiver/otlp/decode_traces.py, whose OTLP/JSON
helpers this shares): ids in exemplars are hex, 64-bit integers come as strings or
numbers, enums as numbers or names, lowerCamelCase or proto field names, unknown
fields ignored. A data point that cannot be kept is dropped alone and counted (OTLP's
partial success, `rejected_data_points`); a body that is not OTLP is InvalidInput.

Values stay as sent (cumulative stays cumulative): the store converts them
(storage/writer/points.py), the forward exporter sends them on as they came.

This module reads protobuf and is the entry point (`decode_metrics_body`); the
OTLP/JSON half is receiver/otlp/decode_metrics_json.py, and what both share (the
decoded request, a metric's common fields, the bucket checks) receiver/otlp/metric_points.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from model.errors import InvalidInput
from model.otlp_values import attributes_of
from model.records import (
    EXPONENTIAL_HISTOGRAM,
    GAUGE,
    HISTOGRAM,
    SUM,
    SUMMARY,
    MetricPoint,
)
from model.timeutil import MAX_NS
from receiver.jsonbody import parse_json
from receiver.otlp.decode_metrics_json import metrics_from_json
from receiver.otlp.json_rules import TIME_RANGE, Drop
from receiver.otlp.metric_points import (
    TEMPORALITIES,
    DecodedMetrics,
    Metric,
    check_exponential,
    check_histogram,
)

# --- protobuf ----------------------------------------------------------------

def parse_proto(body: bytes) -> ExportMetricsServiceRequest:
    request = ExportMetricsServiceRequest()
    try:
        request.ParseFromString(body)
    except (DecodeError, ValueError) as exc:
        raise InvalidInput("the body is not a valid OTLP ExportMetricsServiceRequest",
                           [{"field": "body", "error": str(exc) or "undecodable protobuf"}]) \
            from exc
    return request


def _proto_exemplars(point: Any) -> list[dict[str, Any]]:
    out = []
    for e in point.exemplars:
        if len(e.trace_id) not in (0, 16) or len(e.span_id) not in (0, 8):
            raise Drop("an exemplar's traceId must be 16 bytes and its spanId 8")
        if e.time_unix_nano > MAX_NS:
            raise Drop(TIME_RANGE)
        which = e.WhichOneof("value")
        out.append({"time_ns": e.time_unix_nano,
                    "value": e.as_int if which == "as_int" else e.as_double,
                    "trace_id": e.trace_id.hex() if any(e.trace_id) else "",
                    "span_id": e.span_id.hex() if any(e.span_id) else "",
                    "attributes": attributes_of(e.filtered_attributes)})
    return out


def _proto_number(m: Metric, p: Any) -> MetricPoint:
    out = m.point(attributes_of(p.attributes), p.start_time_unix_nano, p.time_unix_nano)
    out.value = p.as_int if p.WhichOneof("value") == "as_int" else p.as_double
    out.flags = p.flags
    if p.exemplars:
        out.exemplars = _proto_exemplars(p)
    return out


def _with_sum_min_max(out: MetricPoint, p: Any) -> MetricPoint:
    """A histogram point's optional sum, min and max (None when unset), and its
    exemplars: the same fields in explicit and exponential histograms."""
    out.sum = p.sum if p.HasField("sum") else None
    out.min = p.min if p.HasField("min") else None
    out.max = p.max if p.HasField("max") else None
    if p.exemplars:
        out.exemplars = _proto_exemplars(p)
    return out


def _proto_histogram(m: Metric, p: Any) -> MetricPoint:
    out = m.point(attributes_of(p.attributes), p.start_time_unix_nano, p.time_unix_nano)
    bounds, counts = list(p.explicit_bounds), list(p.bucket_counts)
    check_histogram(bounds, counts)
    out.count, out.bounds, out.bucket_counts, out.flags = p.count, bounds, counts, p.flags
    return _with_sum_min_max(out, p)


def _proto_exponential(m: Metric, p: Any) -> MetricPoint:
    out = m.point(attributes_of(p.attributes), p.start_time_unix_nano, p.time_unix_nano)
    positive, negative = list(p.positive.bucket_counts), list(p.negative.bucket_counts)
    check_exponential(p.scale, positive, negative)
    out.count, out.scale, out.zero_count, out.flags = p.count, p.scale, p.zero_count, p.flags
    out.zero_threshold = p.zero_threshold
    out.positive_offset, out.positive_counts = p.positive.offset, positive
    out.negative_offset, out.negative_counts = p.negative.offset, negative
    return _with_sum_min_max(out, p)


def _proto_summary(m: Metric, p: Any) -> MetricPoint:
    out = m.point(attributes_of(p.attributes), p.start_time_unix_nano, p.time_unix_nano)
    out.count, out.sum, out.flags = p.count, p.sum, p.flags
    out.quantiles = [(q.quantile, q.value) for q in p.quantile_values]
    return out


_PROTO: dict[str, tuple[str, Callable[[Metric, Any], MetricPoint]]] = {
    "gauge": (GAUGE, _proto_number), "sum": (SUM, _proto_number),
    "histogram": (HISTOGRAM, _proto_histogram),
    "exponential_histogram": (EXPONENTIAL_HISTOGRAM, _proto_exponential),
    "summary": (SUMMARY, _proto_summary),
}


def metrics_from_proto(request: ExportMetricsServiceRequest) -> DecodedMetrics:
    out = DecodedMetrics()
    append = out.metrics.append
    for ri, resource_metrics in enumerate(request.resource_metrics):
        resource = attributes_of(resource_metrics.resource.attributes)
        service = str(resource.get("service.name", "unknown_service"))
        for si, scope_metrics in enumerate(resource_metrics.scope_metrics):
            scope = scope_metrics.scope
            for mi, metric in enumerate(scope_metrics.metrics):
                which = metric.WhichOneof("data")
                if which is None:
                    continue  # no data: no point to keep or refuse
                kind, decode = _PROTO[which]
                data = getattr(metric, which)
                temporality = getattr(data, "aggregation_temporality", 0)
                m = Metric(metric.name, metric.unit, metric.description, kind,
                            temporality if temporality in TEMPORALITIES else 0,
                            bool(getattr(data, "is_monotonic", False)), service, resource,
                            scope.name, scope.version)
                for pi, point in enumerate(data.data_points):
                    try:
                        append(decode(m, point))
                    except Drop as exc:
                        out.drop(f"resourceMetrics[{ri}].scopeMetrics[{si}].metrics[{mi}]"
                                 f".dataPoints[{pi}]", str(exc))
    return out


def decode_metrics_body(body: bytes, protobuf: bool) -> DecodedMetrics:
    """An OTLP metrics request body, protobuf or OTLP/JSON, as MetricPoint records; the
    one decode used on the event loop and in the decode workers (runtime/offload.py)."""
    return (metrics_from_proto(parse_proto(body)) if protobuf
            else metrics_from_json(parse_json(body)))
