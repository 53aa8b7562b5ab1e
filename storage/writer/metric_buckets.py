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
    """Sounding's bucket of each explicit bucket but the last, no min or max known."""
    return tuple(_inside(lower, upper, to_ms)
                 for lower, upper in zip((-math.inf, *bounds), bounds, strict=False))


def _inside(lower: float, upper: float, to_ms: float) -> int:
    """Sounding's bucket for counts known only to lie in (lower, upper], in the
    metric's unit: the highest that reads at most `upper` from the minutes and the
    hours alike (histogram.bucket_at_most), so that a quantile falls in the OTLP
    bucket that holds the true value; the bucket of `upper` when that one would read
    at or below `lower` (a bucket narrower than a coarse one: `lower` above about
    0.86 `upper`)."""
    ms = max(upper, 0.0) * to_ms
    if ms < math.inf:
        bucket = histogram.bucket_at_most(ms)
        if histogram.lowest_reading(bucket) > lower * to_ms:
            return bucket
    return _ms_bucket(upper, to_ms)


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


def _target(lower: float, upper: float, low: float | None, high: float | None,
            to_ms: float) -> int:
    """Sounding's bucket for the counts of the OTLP bucket (lower, upper] of a point
    whose values lie within `low` and `high` (None: unknown): at the max or the min
    when one of them cuts the bucket short (values recorded), else inside the bucket
    (_inside, above the min)."""
    if (high is not None and upper > high) or (low is not None and upper < low) or (
            not math.isfinite(upper)):
        return _clamped(upper, low, high, to_ms)
    return _inside(lower if low is None else max(lower, low), upper, to_ms)


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
        elif (high is not None and bounds[i] > high) or (
                low is not None and (i == 0 or bounds[i - 1] < low)):
            # Cut short by the max, or holding the min (or wholly below it).
            out.append(_target(bounds[i - 1] if i else -math.inf, bounds[i], low, high, to_ms))
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
    unknown). The counts of an OTLP bucket go to `high` when it falls in the bucket,
    else just inside the bucket's upper bound (_inside; `low` for a bucket wholly
    below it); those of the last, unbounded one to `high`, else to its lower bound.
    So a quantile read from them, from the minutes or the hours, falls in the OTLP
    bucket that holds the true value (or at the min or max). Counts are never
    negative (decoded as unsigned, and a delta whose bucket went down is a reset)."""
    out: dict[int, int] = {}
    if not values[_BUCKETS]:
        return out
    if data is None:
        data = orjson.loads(values[_BUCKETS])

    def add(upper: float, n: int, lower: float | None = None) -> None:
        """`lower`: the bucket's lower bound (None: a value, not a bucket)."""
        if n > 0:
            bucket = (_clamped(upper, low, high, to_ms) if lower is None
                      else _target(lower, upper, low, high, to_ms))
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

        def power(index: int) -> float:  # bucket `index` is (power(index), power(index + 1)]
            try:
                return float(2.0 ** (index * base_exp))
            except OverflowError:
                return math.inf

        lower = power(offset)
        for i, n in enumerate(data["positive"]["counts"]):
            upper = power(offset + i + 1)
            add(upper, n, lower)
            lower = upper
    return out
