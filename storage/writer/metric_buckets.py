"""A stored histogram point's counts in Sounding's latency buckets
(model/histogram.py), for the request rollups that HTTP server duration metrics
feed (storage/writer/points.py). Points are the writer's rows of
rows.METRIC_POINTS, read by position.

The range (`low`, `high`) that keeps each OTLP bucket's counts within the values
recorded is given apart from the row: a delta converted from a cumulative point has
no min and max of its own, yet every value in it lies within the cumulative
point's (storage/writer/points.py hands those over)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import orjson

from model import histogram
from storage import rows

_FIELDS = rows.METRIC_POINTS.names
_COUNT, _SUM, _MAX, _BUCKETS = (
    _FIELDS.index(name) for name in ("count", "sum", "max", "buckets"))


@functools.lru_cache(maxsize=1024)
def _explicit_map(bounds: tuple[float, ...], to_ms: float) -> tuple[int, ...]:
    """Sounding's bucket of each explicit bound, in milliseconds."""
    return tuple(_ms_bucket(b, to_ms) for b in bounds)


def _ms_bucket(value: float, to_ms: float) -> int:
    """Sounding's bucket of a duration in the metric's unit. Past any duration (a
    bound of 1e300 s is a finite float but no finite number of ms) is still a bucket."""
    ms = max(value, 0.0) * to_ms
    return histogram.bucket_of(ms if ms < math.inf else 1e300)


def _clamped(upper: float, low: float | None, high: float | None, to_ms: float) -> int:
    """Sounding's bucket of an OTLP bucket's upper bound, kept within the point's min
    and max when known."""
    if high is not None:
        upper = min(upper, high)
    if low is not None:
        upper = max(upper, low)
    if not math.isfinite(upper):
        upper = 1e300  # past any duration, still a bucket
    return _ms_bucket(upper, to_ms)


@functools.lru_cache(maxsize=4096)
def _explicit_targets(bounds: tuple[float, ...], to_ms: float, low: float | None,
                      high: float | None) -> tuple[int, ...]:
    """Sounding's bucket of each bucket of an explicit histogram with these bounds,
    min and max. An SDK's cumulative min and max seldom move: the same few come
    again and again, so this is worked out once for each."""
    mapped = _explicit_map(bounds, to_ms)
    last = len(bounds)
    out = []
    for i in range(last + 1):
        if i == last:
            out.append(_clamped(high if high is not None else bounds[-1], low, high, to_ms))
        elif (high is not None and bounds[i] > high) or (low is not None and bounds[i] < low):
            out.append(_clamped(bounds[i], low, high, to_ms))  # within min and max
        else:
            out.append(mapped[i])
    return tuple(out)


def explicit_targets(kind: str, data: dict[str, Any] | None, to_ms: float,
                     low: float | None, high: float | None
                     ) -> tuple[tuple[int, ...], list[int]] | None:
    """(Sounding's bucket of each bucket, the counts) of an explicit histogram with
    bounds whose values lie within `low` and `high` (None: unknown), as
    sounding_buckets spreads them; None for any other point."""
    if kind != "histogram" or not data:
        return None
    bounds, counts = data.get("bounds") or [], data.get("counts") or []
    if not bounds or len(counts) != len(bounds) + 1:
        return None
    return _explicit_targets(tuple(bounds), to_ms, low, high), counts


def sounding_buckets(kind: str, values: Sequence[Any], to_ms: float, low: float | None,
                     high: float | None, data: dict[str, Any] | None = None
                     ) -> dict[int, int]:
    """A stored histogram point's counts in Sounding's latency buckets
    (model/histogram.py), its values known to lie within `low` and `high` (None:
    unknown). The counts of an OTLP bucket go to the bucket of its upper bound (its
    lower bound for the last, unbounded one, or `high` when known), kept within
    `low` and `high`: a quantile read from them is within the OTLP histogram's own
    resolution. Counts are never negative (decoded as unsigned, and a delta whose
    bucket went down is a reset)."""
    out: dict[int, int] = {}
    if not values[_BUCKETS]:
        return out
    if data is None:
        data = orjson.loads(values[_BUCKETS])

    def add(upper: float, n: int) -> None:
        if n > 0:
            bucket = _clamped(upper, low, high, to_ms)
            out[bucket] = out.get(bucket, 0) + n

    if kind == "histogram":
        bounds, counts = data.get("bounds") or [], data.get("counts") or []
        if not bounds:  # one bucket: all values in (-inf, +inf)
            if counts:  # at the point's own max when it has one, else its mean
                own_max = values[_MAX]
                add(own_max if own_max is not None else (values[_SUM] or 0.0)
                    / max(values[_COUNT], 1), counts[0])
            return out
        for bucket, n in zip(_explicit_targets(tuple(bounds), to_ms, low, high), counts,
                             strict=False):
            if n:
                out[bucket] = out.get(bucket, 0) + n
        return out
    if kind == "exponential_histogram":
        base_exp = 2.0 ** -data["scale"]
        add(0.0, data["zero_count"])
        add(0.0, sum(data["negative"]["counts"]))
        offset = data["positive"]["offset"]
        for i, n in enumerate(data["positive"]["counts"]):
            try:
                upper = 2.0 ** ((offset + i + 1) * base_exp)
            except OverflowError:
                upper = math.inf
            add(upper, n)
    return out
