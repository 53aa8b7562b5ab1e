"""A mergeable latency histogram with bounded relative error.

Bucket i holds the values in (GAMMA**(i-1), GAMMA**i]. Reporting a bucket by
2*GAMMA**i/(GAMMA+1) is within ACCURACY of every value in it, so any quantile read
from merged counts is within ACCURACY (1%) of the true value at that rank — the
same idea as DDSketch. Buckets are plain integers, so merging is addition, which
the database does atomically.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

ACCURACY = 0.01
GAMMA = (1 + ACCURACY) / (1 - ACCURACY)
_LOG_GAMMA = math.log(GAMMA)
# Durations at or below one microsecond share the lowest bucket.
MIN_MS = 0.001
MIN_BUCKET = math.ceil(math.log(MIN_MS) / _LOG_GAMMA)
# Long ranges read hourly rollups with coarse buckets of COARSE_FACTOR fine ones
# (storage/queries/performance.py): about 23 a decade instead of 115, so that a
# week's histograms are a few rows per hour and route, for quantiles within 5%.
COARSE_FACTOR = 5
COARSE_GAMMA = GAMMA**COARSE_FACTOR
COARSE_ACCURACY = (COARSE_GAMMA - 1) / (COARSE_GAMMA + 1)  # 0.04996
LOG_COARSE_GAMMA = _LOG_COARSE_GAMMA = COARSE_FACTOR * _LOG_GAMMA


def bucket_of(duration_ms: float) -> int:
    if duration_ms <= MIN_MS:
        return MIN_BUCKET
    return math.ceil(math.log(duration_ms) / _LOG_GAMMA)


def bucket_value(bucket: int) -> float:
    if bucket <= MIN_BUCKET:
        return MIN_MS
    try:
        return 2 * GAMMA**bucket / (GAMMA + 1)
    except OverflowError:  # a stored bucket far past any duration bucket_of gives
        return math.inf


def coarse_of(bucket: int) -> int:
    """The coarse bucket holding fine bucket `bucket`: COARSE_FACTOR fine buckets
    each, so coarse bucket j holds the values in (COARSE_GAMMA**(j-1), COARSE_GAMMA**j]
    and a coarse histogram is the one bucket_of would give with COARSE_GAMMA. It is a
    function of the fine bucket, so fine histograms already stored can be coarsened."""
    return -(-bucket // COARSE_FACTOR)


def coarse_value(bucket: int) -> float:
    """A coarse bucket's value: within COARSE_ACCURACY of every value in it."""
    if bucket * COARSE_FACTOR <= MIN_BUCKET:
        return MIN_MS
    try:
        return 2 * COARSE_GAMMA**bucket / (COARSE_GAMMA + 1)
    except OverflowError:
        return math.inf


def bucket_at_most(ms: float) -> int:
    """The highest bucket that reads at most `ms` both fine and coarse (bucket_value,
    and coarse_value of its coarse bucket): the last fine bucket of the highest coarse
    bucket wholly at or below `ms`. Its values read from 0.86 * ms (coarse) up to
    below `ms`. For counts known only to be at most `ms`, so that no reading of them,
    minutes or hours, passes it; bucket_of(ms) reads up to 1% past it fine, 5% coarse.
    At or below MIN_MS: the lowest bucket, as for bucket_of."""
    if ms <= MIN_MS:
        return MIN_BUCKET
    return max(MIN_BUCKET, math.floor(math.log(ms) / _LOG_COARSE_GAMMA) * COARSE_FACTOR)


def lowest_reading(bucket: int) -> float:
    """The lower of a bucket's two readings, fine and coarse (the coarse one, for a
    bucket that ends its coarse bucket, as bucket_at_most's do)."""
    return min(bucket_value(bucket), coarse_value(coarse_of(bucket)))


def coarsen(counts: Mapping[int, int]) -> dict[int, int]:
    """A fine histogram as a coarse one."""
    coarse: dict[int, int] = {}
    for bucket, count in counts.items():
        j = coarse_of(bucket)
        coarse[j] = coarse.get(j, 0) + count
    return coarse


def quantile(counts: Mapping[int, int], q: float,
             value: Callable[[int], float] = bucket_value) -> float | None:
    """The value at nearest rank ceil(q*n) of the merged histogram, or None when empty;
    `value` is coarse_value for a coarse histogram."""
    total = sum(counts.values())
    if total == 0:
        return None
    rank = max(1, math.ceil(q * total))
    seen = 0
    for bucket in sorted(counts):
        seen += counts[bucket]
        if seen >= rank:
            return value(bucket)
    return value(max(counts))


def merge(histograms: Iterable[Mapping[int, int]]) -> dict[int, int]:
    merged: dict[int, int] = {}
    for histogram in histograms:
        for bucket, count in histogram.items():
            merged[bucket] = merged.get(bucket, 0) + count
    return merged
