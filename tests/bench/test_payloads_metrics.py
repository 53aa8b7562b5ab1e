"""The metrics door's payload (bench/payloads_metrics.py) is what it claims, read by
Sounding's own OTLP decoder: 200 points, 40 histograms, 80 sums, 80 gauges, and the
next export of a process carries the same series, same start time, grown values."""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench.payloads_metrics import metrics_proto
from model.records import MetricPoint
from receiver.otlp.decode_metrics import decode_metrics_body

START_NS = 1_790_000_000_000_000_000
NOW_NS = START_NS + 60_000_000_000


def _points(export: int) -> list[MetricPoint]:
    body = metrics_proto(5, start_ns=START_NS).render(export, NOW_NS + export * 10**10)
    decoded = decode_metrics_body(body, protobuf=True)
    assert not decoded.dropped
    return decoded.metrics


def _key(p: MetricPoint) -> tuple[Any, ...]:
    return (p.name, p.kind, tuple(sorted(p.attributes.items())))


def test_an_export_is_200_points_of_the_three_kinds() -> None:
    points = _points(0)
    assert Counter(p.kind for p in points) == {"histogram": 40, "sum": 80, "gauge": 80}
    assert len({_key(p) for p in points}) == 200
    assert all(p.temporality == 2 for p in points if p.kind != "gauge")  # cumulative
    assert all(p.time_ns == NOW_NS for p in points)
    assert all(p.start_ns == START_NS for p in points if p.kind != "gauge")
    for p in points:
        if p.kind == "histogram":
            assert len(p.bucket_counts) == len(p.bounds) + 1
            assert sum(p.bucket_counts) == p.count > 0


def test_the_next_export_grows_the_same_series() -> None:
    first = {_key(p): p for p in _points(0)}
    later = {_key(p): p for p in _points(3)}
    assert first.keys() == later.keys()
    for key, old in first.items():
        new = later[key]
        assert new.start_ns == old.start_ns and new.time_ns > old.time_ns
        if old.kind == "histogram":
            assert new.count > old.count
            assert all(b >= a for a, b in zip(old.bucket_counts, new.bucket_counts, strict=True))
            assert new.sum is not None and old.sum is not None and new.sum > old.sum
        elif old.kind == "sum" and old.monotonic:
            assert new.value is not None and old.value is not None and new.value > old.value
        else:  # up-down counters and gauges stay put in this payload
            assert new.value == old.value
