"""Histogram points added up and read as percentiles: the arithmetic of the Metrics
read API (storage/queries/metric_series.py), kept apart from its SQL. Pure functions.

Points come as stored (metric_points.buckets, /work/briefs/metrics-schema.md):
explicit buckets {"bounds", "counts"}, bucket i being (bounds[i-1], bounds[i]], the
first from -inf and the last to +inf; exponential ones {"scale", "zero_count",
"zero_threshold", "positive": {"offset", "counts"}, "negative": {...}}, index i
covering (base**i, base**(i+1)] with base = 2**(2**-scale).

Counts are added bucket by bucket: explicit buckets by their bounds, exponential
ones by index once brought to the lowest scale among the points (two buckets of
scale s make one of scale s-1, which is exact). A percentile is then read as
Prometheus does: find the bucket holding the rank, interpolate linearly inside it.
So the answer lies in the bucket that holds the true value at that rank: it is
exact to the bucket's resolution, no better. The open-ended buckets are closed by
the points' own min and max when every point carried them, else the first bucket
starts at 0 (when its upper bound is positive) and the last one answers its lower
bound. A point whose buckets cannot be read is left out rather than failing the page.
"""

from __future__ import annotations

import json
import math
from typing import Any

INF = math.inf


def attribute_text(value: Any) -> str:
    """An attribute value as the filters and groups compare it: a string as it is,
    anything else as its JSON (200, true, 1.5, ["a"])."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _power(base_log2: float, index: int) -> float:
    """base**index as 2**(index * log2(base)), infinite when it overflows."""
    try:
        return float(2.0 ** (index * base_log2))
    except OverflowError:
        return INF


def _counts(raw: Any) -> list[int]:
    if not isinstance(raw, list) or not all(
            isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in raw):
        raise ValueError("bucket counts must be a list of non-negative integers")
    return raw


class BucketSum:
    """The bucket counts of many histogram points, added up."""

    def __init__(self) -> None:
        self.explicit: dict[tuple[float, float], int] = {}
        self.scale: int | None = None  # of the exponential buckets held
        self.positive: dict[int, int] = {}
        self.negative: dict[int, int] = {}
        self.zero_count = 0
        self.zero_threshold = 0.0
        self.count = 0
        self.sum = 0.0
        self.sum_known = False
        self.low: float | None = None  # min over the points, when all of them had one
        self.high: float | None = None
        self.bounded = True  # every point added so far had min and max

    def add(self, count: int, total: float | None, low: float | None, high: float | None,
            buckets: Any) -> bool:
        """Add one point; False (and nothing added) when its buckets cannot be read."""
        try:
            if isinstance(buckets, dict) and "bounds" in buckets:
                self._add_explicit(buckets)
            elif isinstance(buckets, dict) and "scale" in buckets:
                self._add_exponential(buckets)
            elif count:
                raise ValueError("no buckets")
        except (ValueError, TypeError, KeyError, OverflowError):
            return False
        self.count += count
        if total is not None:
            self.sum += total
            self.sum_known = True
        if low is None or high is None:
            self.bounded = False
        elif self.bounded:
            self.low = low if self.low is None else min(self.low, low)
            self.high = high if self.high is None else max(self.high, high)
        return True

    def _add_explicit(self, buckets: dict[str, Any]) -> None:
        bounds = [float(b) for b in buckets["bounds"]]
        counts = _counts(buckets["counts"])
        if not counts:
            return
        if len(counts) != len(bounds) + 1 or bounds != sorted(bounds):
            raise ValueError("counts must be one more than the sorted bounds")
        edges = [-INF, *bounds, INF]
        for i, c in enumerate(counts):
            if c:
                key = (edges[i], edges[i + 1])
                self.explicit[key] = self.explicit.get(key, 0) + c

    def _add_exponential(self, buckets: dict[str, Any]) -> None:
        scale = int(buckets["scale"])
        if not -10 <= scale <= 20:  # what OTLP allows
            raise ValueError("scale out of range")
        sides = []
        for side in ("positive", "negative"):
            part = buckets.get(side) or {}
            sides.append((int(part.get("offset", 0)), _counts(part.get("counts", []))))
        zero = int(buckets.get("zero_count", 0))
        threshold = float(buckets.get("zero_threshold", 0.0))
        if self.scale is None or scale < self.scale:
            self._downscale(scale)
        shift = scale - (self.scale if self.scale is not None else scale)
        for (offset, counts), held in zip(sides, (self.positive, self.negative), strict=True):
            for i, c in enumerate(counts):
                if c:
                    index = (offset + i) >> shift
                    held[index] = held.get(index, 0) + c
        self.zero_count += zero
        self.zero_threshold = max(self.zero_threshold, threshold)

    def _downscale(self, scale: int) -> None:
        shift = (self.scale - scale) if self.scale is not None else 0
        self.scale = scale
        if shift:
            for held in (self.positive, self.negative):
                moved: dict[int, int] = {}
                for index, c in held.items():
                    moved[index >> shift] = moved.get(index >> shift, 0) + c
                held.clear()
                held.update(moved)

    def intervals(self) -> list[tuple[float, float, int]]:
        """(low, high, count) of every non-empty bucket, in ascending order."""
        out = [(lo, hi, c) for (lo, hi), c in self.explicit.items()]
        if self.scale is not None:
            base_log2 = 2.0 ** -self.scale
            for index, c in self.positive.items():
                out.append((_power(base_log2, index), _power(base_log2, index + 1), c))
            for index, c in self.negative.items():
                out.append((-_power(base_log2, index + 1), -_power(base_log2, index), c))
        if self.zero_count:
            out.append((-self.zero_threshold, self.zero_threshold, self.zero_count))
        out.sort(key=lambda b: (b[1], b[0]))
        return out

    def quantile(self, q: float) -> float | None:
        """The value at rank q * total (0 < q <= 1), interpolated in its bucket; None
        when no point was counted."""
        buckets = self.intervals()
        total = sum(c for _, _, c in buckets)
        if not total:
            return None
        rank = q * total
        seen = 0
        for lo, hi, c in buckets:
            if seen + c >= rank:
                return self._clamp(self._inside(lo, hi, (rank - seen) / c))
            seen += c
        lo, hi, _ = buckets[-1]
        return self._clamp(self._inside(lo, hi, 1.0))

    def _inside(self, lo: float, hi: float, fraction: float) -> float:
        if hi == INF:
            return self.high if self.bounded and self.high is not None else lo
        if lo == -INF:
            if self.bounded and self.low is not None and self.low <= hi:
                lo = self.low
            else:
                lo = 0.0 if hi > 0 else hi
        return lo + (hi - lo) * fraction

    def _clamp(self, value: float) -> float:
        if self.bounded and self.low is not None and self.high is not None:
            return min(max(value, self.low), self.high)
        return value
