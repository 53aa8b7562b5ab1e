"""OTLP/JSON metrics in, MetricPoint records out, by the OTLP/JSON rules shared with
traces and logs (receiver/otlp/json_rules.py); the protobuf half and the rules common to
both are in receiver/otlp/decode_metrics.py and receiver/otlp/metric_points.py."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from opentelemetry.proto.metrics.v1 import metrics_pb2

from model.errors import InvalidInput
from model.records import (
    EXPONENTIAL_HISTOGRAM,
    GAUGE,
    HISTOGRAM,
    SUM,
    SUMMARY,
    MetricPoint,
)
from receiver.otlp.json_rules import (
    _FLOAT,
    Drop,
    enum,
    envelope_list,
    get,
    hex_id,
    json_attributes,
    json_integer,
    json_list,
    time_ns,
)
from receiver.otlp.metric_points import (
    TEMPORALITIES,
    U64,
    DecodedMetrics,
    Metric,
    check_exponential,
    check_histogram,
)


def _uint64(value: Any, name: str) -> int:
    if value is None:
        return 0
    number = json_integer(value, signed=False)
    if number is None:
        raise Drop(f"{name} must be an unsigned integer or a decimal string")
    if not 0 <= number < U64:
        raise Drop(f"{name} must fit in 64 bits")
    return number


def _int(value: Any, name: str, bits: int = 64) -> int:
    if value is None:
        return 0
    number = json_integer(value, signed=True)
    if number is None:
        raise Drop(f"{name} must be an integer")
    if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
        raise Drop(f"{name} must fit in {bits} bits")
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
    raise Drop(f"{name} must be a number")


def _optional_double(obj: dict[str, Any], name: str) -> float | None:
    value = obj.get(name)
    return None if value is None else _double(value, name)


def _json_exemplars(point: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for e in json_list(point.get("exemplars"), "exemplars"):
        if not isinstance(e, dict):
            raise Drop("an exemplar must be an object")
        out.append({
            "time_ns": time_ns(get(e, "timeUnixNano", "time_unix_nano"),
                                "exemplar timeUnixNano"),
            "value": _number_value(e, "exemplar"),
            "trace_id": hex_id(get(e, "traceId", "trace_id"), "exemplar traceId", 16,
                                False),
            "span_id": hex_id(get(e, "spanId", "span_id"), "exemplar spanId", 8, False),
            "attributes": json_attributes(get(e, "filteredAttributes",
                                               "filtered_attributes")),
        })
    return out


def _number_value(p: dict[str, Any], where: str) -> float | int:
    as_int = get(p, "asInt", "as_int")
    if as_int is not None:
        return _int(as_int, f"{where} asInt")
    as_double = get(p, "asDouble", "as_double")
    return 0.0 if as_double is None else _double(as_double, f"{where} asDouble")


def _json_common(m: Metric, p: Any) -> MetricPoint:
    if not isinstance(p, dict):
        raise Drop("a data point must be an object")
    out = m.point(json_attributes(p.get("attributes")),
                  time_ns(get(p, "startTimeUnixNano", "start_time_unix_nano"),
                           "startTimeUnixNano"),
                  time_ns(get(p, "timeUnixNano", "time_unix_nano"), "timeUnixNano"))
    out.flags = _int(p.get("flags"), "flags", 33) & 0xFFFFFFFF
    exemplars = _json_exemplars(p)
    if exemplars:
        out.exemplars = exemplars
    return out


def _counts(value: Any, name: str) -> list[int]:
    return [_uint64(n, name) for n in json_list(value, name)]


def _json_number(m: Metric, p: Any) -> MetricPoint:
    out = _json_common(m, p)
    out.value = _number_value(p, "dataPoint")
    return out


def _json_histogram(m: Metric, p: Any) -> MetricPoint:
    out = _json_common(m, p)
    bounds = [_double(b, "explicitBounds") for b in
              json_list(get(p, "explicitBounds", "explicit_bounds"), "explicitBounds")]
    counts = _counts(get(p, "bucketCounts", "bucket_counts"), "bucketCounts")
    check_histogram(bounds, counts)
    out.count, out.bounds, out.bucket_counts = _uint64(p.get("count"), "count"), bounds, counts
    out.sum, out.min, out.max = (_optional_double(p, "sum"), _optional_double(p, "min"),
                                 _optional_double(p, "max"))
    return out


def _json_buckets(p: dict[str, Any], side: str) -> tuple[int, list[int]]:
    buckets = p.get(side) or {}
    if not isinstance(buckets, dict):
        raise Drop(f"{side} must be an object")
    return (_int(buckets.get("offset"), f"{side}.offset", 32),
            _counts(get(buckets, "bucketCounts", "bucket_counts"), f"{side}.bucketCounts"))


def _json_exponential(m: Metric, p: Any) -> MetricPoint:
    out = _json_common(m, p)
    out.scale = _int(p.get("scale"), "scale", 32)
    out.positive_offset, out.positive_counts = _json_buckets(p, "positive")
    out.negative_offset, out.negative_counts = _json_buckets(p, "negative")
    check_exponential(out.scale, out.positive_counts, out.negative_counts)
    out.count = _uint64(p.get("count"), "count")
    out.zero_count = _uint64(get(p, "zeroCount", "zero_count"), "zeroCount")
    threshold = get(p, "zeroThreshold", "zero_threshold")
    out.zero_threshold = 0.0 if threshold is None else _double(threshold, "zeroThreshold")
    out.sum, out.min, out.max = (_optional_double(p, "sum"), _optional_double(p, "min"),
                                 _optional_double(p, "max"))
    return out


def _json_summary(m: Metric, p: Any) -> MetricPoint:
    out = _json_common(m, p)
    out.count = _uint64(p.get("count"), "count")
    out.sum = _optional_double(p, "sum")
    quantiles = []
    for q in json_list(get(p, "quantileValues", "quantile_values"), "quantileValues"):
        if not isinstance(q, dict):
            raise Drop("a quantile value must be an object")
        quantiles.append((_double(q.get("quantile", 0), "quantile"),
                          _double(q.get("value", 0), "value")))
    out.quantiles = quantiles
    return out


_JSON: tuple[tuple[str, str, str, Callable[[Metric, Any], MetricPoint]], ...] = (
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
        data = get(metric, camel, snake)
        if data is None:
            continue
        if not isinstance(data, dict):
            raise _not_otlp(f"{where}.{camel}", "must be an object")
        texts = [metric.get(name, "") for name in ("name", "unit", "description")]
        if not all(isinstance(t, str) for t in texts):
            raise _not_otlp(where, "name, unit and description must be strings")
        try:
            temporality = enum(get(data, "aggregationTemporality",
                                     "aggregation_temporality"),
                                metrics_pb2.AggregationTemporality, "aggregationTemporality")
        except Drop as exc:
            raise _not_otlp(f"{where}.{camel}", str(exc)) from exc
        monotonic = get(data, "isMonotonic", "is_monotonic")
        m = Metric(texts[0], texts[1], texts[2], kind,
                    temporality if temporality in TEMPORALITIES else 0, monotonic is True,
                    service, resource, scope, version)
        for pi, point in enumerate(envelope_list(data, "dataPoints", "data_points",
                                                  f"{where}.{camel}.")):
            try:
                out.metrics.append(decode(m, point))
            except Drop as exc:
                out.drop(f"{where}.dataPoints[{pi}]", str(exc))
        return


def metrics_from_json(body: Any) -> DecodedMetrics:
    if not isinstance(body, dict):
        raise _not_otlp("body", "must be an object with resourceMetrics")
    out = DecodedMetrics()
    for ri, resource_metrics in enumerate(envelope_list(body, "resourceMetrics",
                                                         "resource_metrics", "")):
        where_r = f"resourceMetrics[{ri}]"
        if not isinstance(resource_metrics, dict):
            raise _not_otlp(where_r, "must be an object")
        resource_obj = resource_metrics.get("resource") or {}
        try:
            resource = json_attributes(resource_obj.get("attributes")
                                       if isinstance(resource_obj, dict) else None)
        except Drop as exc:
            raise _not_otlp(f"{where_r}.resource", str(exc)) from exc
        service = str(resource.get("service.name", "unknown_service"))
        for si, scope_metrics in enumerate(envelope_list(
                resource_metrics, "scopeMetrics", "scope_metrics", f"{where_r}.")):
            where_s = f"{where_r}.scopeMetrics[{si}]"
            if not isinstance(scope_metrics, dict):
                raise _not_otlp(where_s, "must be an object")
            scope_obj = scope_metrics.get("scope") or {}
            scope_obj = scope_obj if isinstance(scope_obj, dict) else {}
            scope, version = scope_obj.get("name", ""), scope_obj.get("version", "")
            scope = scope if isinstance(scope, str) else ""
            version = version if isinstance(version, str) else ""
            for mi, metric in enumerate(envelope_list(scope_metrics, "metrics", "metrics",
                                                       f"{where_s}.")):
                _json_metric(metric, f"{where_s}.metrics[{mi}]", service, resource, scope,
                             version, out)
    return out
