"""Metric points in the wire form (storage/rows.py's METRIC_SERIES, METRIC_WIRE and
METRIC_EXEMPLARS): the series each point belongs to, stored once, the point's values,
with what the writer needs to turn cumulative values into deltas
(storage/writer/points.py) and HTTP server durations into request rollups, and the
exemplars that name a trace, a few per series and minute.

A series is keyed by the first 16 bytes of blake2b over its name, kind, unit,
resource id, scope and attributes (sorted by key, as JSON): the same series from a
restarted process, or from another collector, has the same key. An SDK sends each
of its series again every interval: the key and the attributes' JSON are kept per
process (`series_key`), by what they are made of, so that a series sent again costs
a dict lookup instead of sorting, serialising and hashing its attributes.
"""

from __future__ import annotations

import functools
import hashlib
import math
from typing import Any

from model.operations import environment_of
from model.records import (
    EXPONENTIAL_HISTOGRAM,
    GAUGE,
    HISTOGRAM,
    SUM,
    SUMMARY,
    TEMPORALITY_CUMULATIVE,
    MetricPoint,
)
from storage import rows
from storage.jsontext import dumps
from storage.rows import Row
from storage.wire.resources import ResourceRows

# HTTP server duration metrics, current semantic conventions and the older ones:
# their points feed the request rollups. The unit when the sender gave none.
REQUEST_DURATIONS = {"http.server.request.duration": "s", "http.server.duration": "ms"}
_TO_MS = {"s": 1000.0, "ms": 1.0, "us": 0.001, "\u00b5s": 0.001, "ns": 0.000001,
          "min": 60_000.0}
SERVER_ERROR = 500


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def points_reading(point: MetricPoint) -> str:
    """How a series' stored points read over time (METRIC_SERIES.points): "delta"
    for what the writer turns into deltas or what came as deltas, "value" otherwise."""
    if point.kind in (HISTOGRAM, EXPONENTIAL_HISTOGRAM):
        return "delta"
    if point.kind == SUM and (point.monotonic or point.temporality != TEMPORALITY_CUMULATIVE):
        return "delta"
    return "value"


def is_cumulative(point: MetricPoint) -> bool:
    """Whether the writer converts the point to a delta: cumulative monotonic sums and
    cumulative histograms. A non-monotonic cumulative sum is a value (a gauge, in
    effect): its differences mean nothing on their own."""
    if point.temporality != TEMPORALITY_CUMULATIVE:
        return False
    return point.kind in (HISTOGRAM, EXPONENTIAL_HISTOGRAM) or (
        point.kind == SUM and point.monotonic)


@functools.lru_cache(maxsize=256)
def _bounds_json(bounds: tuple[float, ...]) -> str:
    """The same few sets of bounds come in every request: written once each."""
    return dumps(list(bounds))


def buckets_json(point: MetricPoint) -> str | None:
    kind = point.kind
    if kind == HISTOGRAM:
        # As dumps({"bounds": ..., "counts": ...}) writes it.
        return (f'{{"bounds":{_bounds_json(tuple(point.bounds))},'
                f'"counts":{dumps(list(point.bucket_counts))}}}')
    if kind == EXPONENTIAL_HISTOGRAM:
        return dumps({"scale": point.scale, "zero_count": point.zero_count,
                      "zero_threshold": _finite(point.zero_threshold),
                      "positive": {"offset": point.positive_offset,
                                   "counts": point.positive_counts},
                      "negative": {"offset": point.negative_offset,
                                   "counts": point.negative_counts}})
    if kind == SUMMARY:
        # JSON has no NaN: a quantile without a value is null.
        return dumps({"quantiles": [[_finite(q), _finite(v)] for q, v in point.quantiles]})
    return None


# What series_key made: (prefix, attributes as decoded, in their order, and their
# values' types) -> (key, attributes' JSON). The types are in the key because 1,
# 1.0 and True are equal in Python but not in JSON (-0.0 and 0.0, equal floats, do
# share the key first made of either). Bounded: emptied when full.
SeriesParts = tuple[bytes, tuple[tuple[str, Any], ...], tuple[type, ...]]
_SERIES_KEYS: dict[SeriesParts, tuple[bytes, str]] = {}
MAX_SERIES_KEYS = 100_000


def series_key(prefix: bytes, attributes: dict[str, Any]) -> tuple[bytes, str]:
    """(the series key, its attributes' JSON) of a point with these attributes of the
    metric whose key starts with `prefix`. The attributes of one series come in the
    same order each time from one SDK; in another order they are a second entry of
    the same key. A value that cannot be a dict key (a list or map) is not kept."""
    try:
        parts = (prefix, tuple(attributes.items()), tuple(map(type, attributes.values())))
        found = _SERIES_KEYS.get(parts)
    except TypeError:
        parts, found = None, None
    if found is not None:
        return found
    text = dumps(dict(sorted(attributes.items())))
    found = (hashlib.blake2b(prefix + text.encode(), digest_size=16).digest(), text)
    if parts is not None:
        if len(_SERIES_KEYS) >= MAX_SERIES_KEYS:
            _SERIES_KEYS.clear()
        _SERIES_KEYS[parts] = found
    return found


def _to_ms(point: MetricPoint) -> float:
    default_unit = REQUEST_DURATIONS.get(point.name)
    if default_unit is None or point.kind not in (HISTOGRAM, EXPONENTIAL_HISTOGRAM):
        return 0.0
    return _TO_MS.get(point.unit or default_unit, 0.0)


def _status(attributes: dict[str, Any]) -> int:
    for name in ("http.response.status_code", "http.status_code"):
        code = attributes.get(name)
        if code is not None:
            try:
                return int(code)
            except (TypeError, ValueError):
                break
    # No status: a request the instrumentation marked failed counts as a server error,
    # as an errored server span does (processors/spanmetrics.py).
    return SERVER_ERROR if attributes.get("error.type") else 0


EXEMPLAR_MINUTE_NS = 60_000_000_000


def exemplar_slot(trace_id: bytes) -> int:
    """The slot of METRIC_EXEMPLARS an exemplar takes in its series' minute. Trace ids
    are random, so their last byte spreads exemplars over the slots; the same
    exemplar sent again, by any collector, takes the same slot and is stored once,
    and a trace measured many times in a minute keeps one slot, leaving the others
    to other traces."""
    return trace_id[-1] % rows.MAX_EXEMPLARS


def _exemplar_rows(key: bytes, point: MetricPoint, out: dict[tuple[bytes, int, int], Row]
                   ) -> None:
    """The point's exemplars that name a trace into `out`, by (series, minute, slot):
    the first of a slot in the batch is kept, as the store keeps the first committed
    (ON CONFLICT DO NOTHING), so a batch hands the writer at most MAX_EXEMPLARS a
    series a minute whatever the point carries."""
    exemplar_row = rows.METRIC_EXEMPLARS.row
    for e in point.exemplars:
        try:
            trace_id = bytes.fromhex(e.get("trace_id") or "")
            span_id = bytes.fromhex(e.get("span_id") or "")
        except (TypeError, ValueError):
            continue  # a processor's doing: the point is stored without it
        if len(trace_id) != 16 or not any(trace_id) or len(span_id) not in (0, 8):
            continue
        time_ns = e.get("time_ns") or point.time_ns
        if not isinstance(time_ns, int):
            continue
        minute = time_ns // EXEMPLAR_MINUTE_NS * 60
        slot = (key, minute, exemplar_slot(trace_id))
        if slot in out:
            continue
        value = e.get("value")
        out[slot] = exemplar_row(
            series_key=key, minute=minute, slot=slot[2], time_ns=time_ns,
            value=_finite(float(value)) if isinstance(value, int | float) else None,
            trace_id=trace_id, span_id=span_id)


def encode_metrics(points: list[MetricPoint], resources: ResourceRows
                   ) -> tuple[list[Row], list[Row], list[Row]]:
    """(series rows, point rows, exemplar rows) of `points`; their resources are added
    to `resources` (storage/wire/resources.py). A point without exemplars pays one
    attribute test for them."""
    series: dict[bytes, Row] = {}
    out = []
    exemplars: dict[tuple[bytes, int, int], Row] = {}
    series_row, point_row = rows.METRIC_SERIES.row, rows.METRIC_WIRE.row
    # What the points of one metric share: the start of their series key's hash,
    # the resource id, the unit's scale to milliseconds, how its points read and
    # whether the writer converts them.
    metrics: dict[tuple[Any, ...], tuple[bytes, int, float, str, int]] = {}
    for p in points:
        metric_key = (id(p.resource_attributes), p.name, p.kind, p.unit, p.scope_name,
                      p.temporality, p.monotonic)
        shared = metrics.get(metric_key)
        if shared is None:
            resource = resources.ids.get(id(p.resource_attributes))
            if resource is None:
                resource = resources.add(p.resource_attributes)
            prefix = b"\n".join((p.name.encode(), p.kind.encode(), p.unit.encode(),
                                 str(resource).encode(), p.scope_name.encode(), b""))
            shared = metrics[metric_key] = (prefix, resource, _to_ms(p), points_reading(p),
                                            int(is_cumulative(p)))
        prefix, resource, to_ms, reading, cumulative = shared
        key, attributes = series_key(prefix, p.attributes)
        if key not in series:
            series[key] = series_row(
                series_key=key, name=p.name, kind=p.kind, unit=p.unit,
                description=p.description, temporality=p.temporality,
                monotonic=int(p.monotonic), points=reading,
                service_name=p.service_name, scope_name=p.scope_name, resource_id=resource,
                attributes=attributes)
        if to_ms:
            attrs = p.attributes
            method = attrs.get("http.request.method") or attrs.get("http.method") or ""
            env = environment_of(p.resource_attributes)
            request = (p.service_name[:200], env[:200], str(method).upper()[:16],
                       str(attrs.get("http.route") or "")[:500], _status(attrs))
        else:
            request = ("", "", "", "", 0)
        if p.exemplars:
            _exemplar_rows(key, p, exemplars)
        value = p.value if p.kind in (GAUGE, SUM) else None
        out.append(point_row(
            series_key=key, time_ns=p.time_ns, start_ns=p.start_ns,
            value=None if value is None else _finite(float(value)),
            count=p.count, sum=_finite(p.sum), min=_finite(p.min), max=_finite(p.max),
            buckets=buckets_json(p), flags=p.flags, cumulative=cumulative,
            kind=p.kind, service=request[0], env=request[1], method=request[2],
            route=request[3], status=request[4], to_ms=to_ms))
    return list(series.values()), out, list(exemplars.values())
