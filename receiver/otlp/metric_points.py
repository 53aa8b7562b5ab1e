"""What the OTLP metrics decoders (receiver/otlp/decode_metrics.py for protobuf,
receiver/otlp/decode_metrics_json.py for OTLP/JSON) share: the decoded request, what
every point of one metric has in common, and the checks on histogram buckets."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

from model.records import TEMPORALITY_CUMULATIVE, TEMPORALITY_DELTA, MetricPoint
from model.timeutil import MAX_NS
from receiver.otlp.json_rules import TIME_RANGE, Drop, Dropped

# OTLP's exponential histogram scales (the data model allows -10..20).
SCALES = range(-10, 21)
# At most this many buckets per histogram point: more is no histogram an SDK sends,
# and every bucket is stored.
MAX_BUCKETS = 4096
TEMPORALITIES = (0, TEMPORALITY_DELTA, TEMPORALITY_CUMULATIVE)
U64 = 2**64


@dataclass(slots=True)
class DecodedMetrics(Dropped):
    metrics: list[MetricPoint] = field(default_factory=list)  # named as in Batch


@dataclass(slots=True)
class Metric:
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
            raise Drop(TIME_RANGE)
        if not time_ns:
            raise Drop("timeUnixNano must be set")
        return MetricPoint(self.name, self.unit, self.description, self.kind,
                           self.temporality, self.monotonic, self.service, self.resource,
                           self.scope, attributes, start_ns, time_ns,
                           scope_version=self.scope_version)


@functools.lru_cache(maxsize=256)
def good_bounds(bounds: tuple[float, ...]) -> bool:
    """Finite and increasing; the same few sets of bounds come in every request."""
    return all(math.isfinite(b) for b in bounds) and all(
        a < b for a, b in zip(bounds, bounds[1:], strict=False))


def check_histogram(bounds: list[float], counts: list[int]) -> None:
    if len(counts) > MAX_BUCKETS:
        raise Drop(f"more than {MAX_BUCKETS} buckets")
    if counts and len(counts) != len(bounds) + 1:
        raise Drop("bucketCounts must have one more element than explicitBounds")
    if not good_bounds(tuple(bounds)):
        raise Drop("explicitBounds must be finite and increasing")


def check_exponential(scale: int, positive: list[int], negative: list[int]) -> None:
    if scale not in SCALES:
        raise Drop(f"scale must be within -10..20, got {scale}")
    if len(positive) + len(negative) > MAX_BUCKETS:
        raise Drop(f"more than {MAX_BUCKETS} buckets")
