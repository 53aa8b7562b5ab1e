"""Pure decode functions for OTLP metrics: protobuf and OTLP/JSON in, MetricPoint
records out, by the same rules as traces (receiver/decode_otlp.py, whose OTLP/JSON
helpers this shares): ids in exemplars are hex, 64-bit integers come as strings or
numbers, enums as numbers or names, lowerCamelCase or proto field names, unknown
fields ignored. A data point that cannot be kept is dropped alone and counted (OTLP's
partial success, `rejected_data_points`); a body that is not OTLP is InvalidInput.

Values stay as sent (cumulative stays cumulative): the store converts them
(storage/writer_metrics.py), the forward exporter sends them on as they came.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.metrics.v1 import metrics_pb2

from receiver.decode_otlp import (
    _FLOAT,
    _INT,
    _UINT,
    MAX_DROP_REASONS,
    _Drop,
    _enum,
    _envelope_list,
    _get,
    _hex_id,
    _list,
    _time_ns,
    json_attributes,
)
from receiver.jsonbody import parse_json
from sounding.errors import InvalidInput
from sounding.otlp_values import attributes_of
from sounding.records import (
    EXPONENTIAL_HISTOGRAM,
    GAUGE,
    HISTOGRAM,
    SUM,
    SUMMARY,
    TEMPORALITY_CUMULATIVE,
    TEMPORALITY_DELTA,
    MetricPoint,
)
from sounding.timeutil import MAX_NS

_TIME_RANGE = "times must be below 2^63 ns (2262-04-11T23:47:16.854775807Z)"
# OTLP's exponential histogram scales (the data model allows -10..20).
_SCALES = range(-10, 21)
# At most this many buckets per histogram point: more is no histogram an SDK sends,
# and every bucket is stored.
MAX_BUCKETS = 4096
_TEMPORALITIES = (0, TEMPORALITY_DELTA, TEMPORALITY_CUMULATIVE)
_U64 = 2**64


@dataclass(slots=True)
class DecodedMetrics:
    metrics: list[MetricPoint] = field(default_factory=list)  # named as in Batch
    dropped: int = 0
    reasons: list[str] = field(default_factory=list)  # the first few, for the 400 body

    def drop(self, where: str, reason: str) -> None:
        self.dropped += 1
        if len(self.reasons) < MAX_DROP_REASONS:
            self.reasons.append(f"{where}: {reason}")


@dataclass(slots=True)
class _Metric:
    """What every point of one metric shares."""

    name: str
    unit: str
    description: str
    kind: str
    temporality: int
    monotonic: bool
    service: str
    resource: dict[str, Any]
    scope: str
    scope_version: str

    def point(self, attributes: dict[str, Any], start_ns: int, time_ns: int) -> MetricPoint:
        if start_ns > MAX_NS or time_ns > MAX_NS:
            raise _Drop(_TIME_RANGE)
        if not time_ns:
            raise _Drop("timeUnixNano must be set")
        return MetricPoint(self.name, self.unit, self.description, self.kind,
                           self.temporality, self.monotonic, self.service, self.resource,
                           self.scope, attributes, start_ns, time_ns,
                           scope_version=self.scope_version)


@functools.lru_cache(maxsize=256)
def _good_bounds(bounds: tuple[float, ...]) -> bool:
    """Finite and increasing; the same few sets of bounds come in every request."""
    return all(math.isfinite(b) for b in bounds) and all(
        a < b for a, b in zip(bounds, bounds[1:], strict=False))


def _check_histogram(bounds: list[float], counts: list[int]) -> None:
    if len(counts) > MAX_BUCKETS:
        raise _Drop(f"more than {MAX_BUCKETS} buckets")
    if counts and len(counts) != len(bounds) + 1:
        raise _Drop("bucketCounts must have one more element than explicitBounds")
    if not _good_bounds(tuple(bounds)):
        raise _Drop("explicitBounds must be finite and increasing")


def _check_exponential(scale: int, positive: list[int], negative: list[int]) -> None:
    if scale not in _SCALES:
        raise _Drop(f"scale must be within -10..20, got {scale}")
    if len(positive) + len(negative) > MAX_BUCKETS:
        raise _Drop(f"more than {MAX_BUCKETS} buckets")


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
            raise _Drop("an exemplar's traceId must be 16 bytes and its spanId 8")
        if e.time_unix_nano > MAX_NS:
            raise _Drop(_TIME_RANGE)
        which = e.WhichOneof("value")
        out.append({"time_ns": e.time_unix_nano,
                    "value": e.as_int if which == "as_int" else e.as_double,
                    "trace_id": e.trace_id.hex() if any(e.trace_id) else "",
                    "span_id": e.span_id.hex() if any(e.span_id) else "",
                    "attributes": attributes_of(e.filtered_attributes)})
    return out


def _proto_number(m: _Metric, p: Any) -> MetricPoint:
    out = m.point(attributes_of(p.attributes), p.start_time_unix_nano, p.time_unix_nano)
    out.value = p.as_int if p.WhichOneof("value") == "as_int" else p.as_double
    out.flags = p.flags
    if p.exemplars:
        out.exemplars = _proto_exemplars(p)
    return out


def _proto_histogram(m: _Metric, p: Any) -> MetricPoint:
    out = m.point(attributes_of(p.attributes), p.start_time_unix_nano, p.time_unix_nano)
    bounds, counts = list(p.explicit_bounds), list(p.bucket_counts)
    _check_histogram(bounds, counts)
    out.count, out.bounds, out.bucket_counts, out.flags = p.count, bounds, counts, p.flags
    out.sum = p.sum if p.HasField("sum") else None
    out.min = p.min if p.HasField("min") else None
    out.max = p.max if p.HasField("max") else None
    if p.exemplars:
        out.exemplars = _proto_exemplars(p)
    return out


def _proto_exponential(m: _Metric, p: Any) -> MetricPoint:
    out = m.point(attributes_of(p.attributes), p.start_time_unix_nano, p.time_unix_nano)
    positive, negative = list(p.positive.bucket_counts), list(p.negative.bucket_counts)
    _check_exponential(p.scale, positive, negative)
    out.count, out.scale, out.zero_count, out.flags = p.count, p.scale, p.zero_count, p.flags
    out.zero_threshold = p.zero_threshold
    out.positive_offset, out.positive_counts = p.positive.offset, positive
    out.negative_offset, out.negative_counts = p.negative.offset, negative
    out.sum = p.sum if p.HasField("sum") else None
    out.min = p.min if p.HasField("min") else None
    out.max = p.max if p.HasField("max") else None
    if p.exemplars:
        out.exemplars = _proto_exemplars(p)
    return out


def _proto_summary(m: _Metric, p: Any) -> MetricPoint:
    out = m.point(attributes_of(p.attributes), p.start_time_unix_nano, p.time_unix_nano)
    out.count, out.sum, out.flags = p.count, p.sum, p.flags
    out.quantiles = [(q.quantile, q.value) for q in p.quantile_values]
    return out


_PROTO: dict[str, tuple[str, Callable[[_Metric, Any], MetricPoint]]] = {
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
                m = _Metric(metric.name, metric.unit, metric.description, kind,
                            temporality if temporality in _TEMPORALITIES else 0,
                            bool(getattr(data, "is_monotonic", False)), service, resource,
                            scope.name, scope.version)
                for pi, point in enumerate(data.data_points):
                    try:
                        append(decode(m, point))
                    except _Drop as exc:
                        out.drop(f"resourceMetrics[{ri}].scopeMetrics[{si}].metrics[{mi}]"
                                 f".dataPoints[{pi}]", str(exc))
    return out


# --- OTLP/JSON ---------------------------------------------------------------

def _uint64(value: Any, name: str) -> int:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _UINT.fullmatch(value):
        number = int(value)
    else:
        raise _Drop(f"{name} must be an unsigned integer or a decimal string")
    if not 0 <= number < _U64:
        raise _Drop(f"{name} must fit in 64 bits")
    return number


def _int(value: Any, name: str, bits: int = 64) -> int:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _INT.fullmatch(value):
        number = int(value)
    else:
        raise _Drop(f"{name} must be an integer")
    if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
        raise _Drop(f"{name} must fit in {bits} bits")
    return number


def _double(value: Any, name: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if value == "NaN":
        return math.nan
    if value in ("Infinity", "-Infinity"):
        return math.inf if value == "Infinity" else -math.inf
    if isinstance(value, str) and _FLOAT.fullmatch(value):
        return float(value)
    raise _Drop(f"{name} must be a number")


def _optional_double(obj: dict[str, Any], name: str) -> float | None:
    value = obj.get(name)
    return None if value is None else _double(value, name)


def _json_exemplars(point: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for e in _list(point.get("exemplars"), "exemplars"):
        if not isinstance(e, dict):
            raise _Drop("an exemplar must be an object")
        out.append({
            "time_ns": _time_ns(_get(e, "timeUnixNano", "time_unix_nano"),
                                "exemplar timeUnixNano"),
            "value": _number_value(e, "exemplar"),
            "trace_id": _hex_id(_get(e, "traceId", "trace_id"), "exemplar traceId", 16,
                                False),
            "span_id": _hex_id(_get(e, "spanId", "span_id"), "exemplar spanId", 8, False),
            "attributes": json_attributes(_get(e, "filteredAttributes",
                                               "filtered_attributes")),
        })
    return out


def _number_value(p: dict[str, Any], where: str) -> float | int:
    as_int = _get(p, "asInt", "as_int")
    if as_int is not None:
        return _int(as_int, f"{where} asInt")
    as_double = _get(p, "asDouble", "as_double")
    return 0.0 if as_double is None else _double(as_double, f"{where} asDouble")


def _json_common(m: _Metric, p: Any) -> MetricPoint:
    if not isinstance(p, dict):
        raise _Drop("a data point must be an object")
    out = m.point(json_attributes(p.get("attributes")),
                  _time_ns(_get(p, "startTimeUnixNano", "start_time_unix_nano"),
                           "startTimeUnixNano"),
                  _time_ns(_get(p, "timeUnixNano", "time_unix_nano"), "timeUnixNano"))
    out.flags = _int(p.get("flags"), "flags", 33) & 0xFFFFFFFF
    out.exemplars = _json_exemplars(p)
    return out


def _counts(value: Any, name: str) -> list[int]:
    return [_uint64(n, name) for n in _list(value, name)]


def _json_number(m: _Metric, p: Any) -> MetricPoint:
    out = _json_common(m, p)
    out.value = _number_value(p, "dataPoint")
    return out


def _json_histogram(m: _Metric, p: Any) -> MetricPoint:
    out = _json_common(m, p)
    bounds = [_double(b, "explicitBounds") for b in
              _list(_get(p, "explicitBounds", "explicit_bounds"), "explicitBounds")]
    counts = _counts(_get(p, "bucketCounts", "bucket_counts"), "bucketCounts")
    _check_histogram(bounds, counts)
    out.count, out.bounds, out.bucket_counts = _uint64(p.get("count"), "count"), bounds, counts
    out.sum, out.min, out.max = (_optional_double(p, "sum"), _optional_double(p, "min"),
                                 _optional_double(p, "max"))
    return out


def _json_buckets(p: dict[str, Any], side: str) -> tuple[int, list[int]]:
    buckets = p.get(side) or {}
    if not isinstance(buckets, dict):
        raise _Drop(f"{side} must be an object")
    return (_int(buckets.get("offset"), f"{side}.offset", 32),
            _counts(_get(buckets, "bucketCounts", "bucket_counts"), f"{side}.bucketCounts"))


def _json_exponential(m: _Metric, p: Any) -> MetricPoint:
    out = _json_common(m, p)
    out.scale = _int(p.get("scale"), "scale", 32)
    out.positive_offset, out.positive_counts = _json_buckets(p, "positive")
    out.negative_offset, out.negative_counts = _json_buckets(p, "negative")
    _check_exponential(out.scale, out.positive_counts, out.negative_counts)
    out.count = _uint64(p.get("count"), "count")
    out.zero_count = _uint64(_get(p, "zeroCount", "zero_count"), "zeroCount")
    threshold = _get(p, "zeroThreshold", "zero_threshold")
    out.zero_threshold = 0.0 if threshold is None else _double(threshold, "zeroThreshold")
    out.sum, out.min, out.max = (_optional_double(p, "sum"), _optional_double(p, "min"),
                                 _optional_double(p, "max"))
    return out


def _json_summary(m: _Metric, p: Any) -> MetricPoint:
    out = _json_common(m, p)
    out.count = _uint64(p.get("count"), "count")
    out.sum = _optional_double(p, "sum")
    quantiles = []
    for q in _list(_get(p, "quantileValues", "quantile_values"), "quantileValues"):
        if not isinstance(q, dict):
            raise _Drop("a quantile value must be an object")
        quantiles.append((_double(q.get("quantile", 0), "quantile"),
                          _double(q.get("value", 0), "value")))
    out.quantiles = quantiles
    return out


_JSON: tuple[tuple[str, str, str, Callable[[_Metric, Any], MetricPoint]], ...] = (
    ("gauge", "gauge", GAUGE, _json_number), ("sum", "sum", SUM, _json_number),
    ("histogram", "histogram", HISTOGRAM, _json_histogram),
    ("exponentialHistogram", "exponential_histogram", EXPONENTIAL_HISTOGRAM,
     _json_exponential),
    ("summary", "summary", SUMMARY, _json_summary),
)


def _not_otlp(where: str, error: str) -> InvalidInput:
    return InvalidInput("the body is not OTLP/JSON", [{"field": where, "error": error}])


def _json_metric(metric: Any, where: str, service: str, resource: dict[str, Any],
                 scope: str, version: str, out: DecodedMetrics) -> None:
    if not isinstance(metric, dict):
        raise _not_otlp(where, "must be an object")
    for camel, snake, kind, decode in _JSON:
        data = _get(metric, camel, snake)
        if data is None:
            continue
        if not isinstance(data, dict):
            raise _not_otlp(f"{where}.{camel}", "must be an object")
        texts = [metric.get(name, "") for name in ("name", "unit", "description")]
        if not all(isinstance(t, str) for t in texts):
            raise _not_otlp(where, "name, unit and description must be strings")
        try:
            temporality = _enum(_get(data, "aggregationTemporality",
                                     "aggregation_temporality"),
                                metrics_pb2.AggregationTemporality, "aggregationTemporality")
        except _Drop as exc:
            raise _not_otlp(f"{where}.{camel}", str(exc)) from exc
        monotonic = _get(data, "isMonotonic", "is_monotonic")
        m = _Metric(texts[0], texts[1], texts[2], kind,
                    temporality if temporality in _TEMPORALITIES else 0, monotonic is True,
                    service, resource, scope, version)
        for pi, point in enumerate(_envelope_list(data, "dataPoints", "data_points",
                                                  f"{where}.{camel}.")):
            try:
                out.metrics.append(decode(m, point))
            except _Drop as exc:
                out.drop(f"{where}.dataPoints[{pi}]", str(exc))
        return


def metrics_from_json(body: Any) -> DecodedMetrics:
    if not isinstance(body, dict):
        raise _not_otlp("body", "must be an object with resourceMetrics")
    out = DecodedMetrics()
    for ri, resource_metrics in enumerate(_envelope_list(body, "resourceMetrics",
                                                         "resource_metrics", "")):
        where_r = f"resourceMetrics[{ri}]"
        if not isinstance(resource_metrics, dict):
            raise _not_otlp(where_r, "must be an object")
        resource_obj = resource_metrics.get("resource") or {}
        try:
            resource = json_attributes(resource_obj.get("attributes")
                                       if isinstance(resource_obj, dict) else None)
        except _Drop as exc:
            raise _not_otlp(f"{where_r}.resource", str(exc)) from exc
        service = str(resource.get("service.name", "unknown_service"))
        for si, scope_metrics in enumerate(_envelope_list(
                resource_metrics, "scopeMetrics", "scope_metrics", f"{where_r}.")):
            where_s = f"{where_r}.scopeMetrics[{si}]"
            if not isinstance(scope_metrics, dict):
                raise _not_otlp(where_s, "must be an object")
            scope_obj = scope_metrics.get("scope") or {}
            scope_obj = scope_obj if isinstance(scope_obj, dict) else {}
            scope, version = scope_obj.get("name", ""), scope_obj.get("version", "")
            scope = scope if isinstance(scope, str) else ""
            version = version if isinstance(version, str) else ""
            for mi, metric in enumerate(_envelope_list(scope_metrics, "metrics", "metrics",
                                                       f"{where_s}.")):
                _json_metric(metric, f"{where_s}.metrics[{mi}]", service, resource, scope,
                             version, out)
    return out


def decode_metrics_body(body: bytes, protobuf: bool) -> DecodedMetrics:
    """An OTLP metrics request body, protobuf or OTLP/JSON, as MetricPoint records; the
    one decode used on the event loop and in the decode workers (sounding/offload.py)."""
    return (metrics_from_proto(parse_proto(body)) if protobuf
            else metrics_from_json(parse_json(body)))
