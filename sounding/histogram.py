"""A mergeable latency histogram with bounded relative error.

Bucket i holds the values in (GAMMA**(i-1), GAMMA**i]. Reporting a bucket by
2*GAMMA**i/(GAMMA+1) is within ACCURACY of every value in it, so any quantile read
from merged counts is within ACCURACY (1%) of the true value at that rank — the
same idea as DDSketch. Buckets are plain integers, so merging is addition, which
the database does atomically.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

ACCURACY = 0.01
GAMMA = (1 + ACCURACY) / (1 - ACCURACY)
_LOG_GAMMA = math.log(GAMMA)
# Durations at or below one microsecond share the lowest bucket.
MIN_MS = 0.001
MIN_BUCKET = math.ceil(math.log(MIN_MS) / _LOG_GAMMA)


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


def quantile(counts: Mapping[int, int], q: float) -> float | None:
    """The value at nearest rank ceil(q*n) of the merged histogram, or None when empty."""
    total = sum(counts.values())
    if total == 0:
        return None
    rank = max(1, math.ceil(q * total))
    seen = 0
    for bucket in sorted(counts):
        seen += counts[bucket]
        if seen >= rank:
            return bucket_value(bucket)
    return bucket_value(max(counts))


def merge(histograms: Iterable[Mapping[int, int]]) -> dict[int, int]:
    merged: dict[int, int] = {}
    for histogram in histograms:
        for bucket, count in histogram.items():
            merged[bucket] = merged.get(bucket, 0) + count
    return merged
