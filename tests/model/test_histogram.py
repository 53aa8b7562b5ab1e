"""The latency histogram: bounded relative error, merge by addition."""

from __future__ import annotations

import math
import random

from model import histogram


def exact(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def test_quantiles_within_one_percent_across_magnitudes() -> None:
    rng = random.Random(1)
    values = [rng.choice([0.05, 1, 30, 900, 60_000]) * rng.uniform(0.5, 2) for _ in range(20_000)]
    counts: dict[int, int] = {}
    for v in values:
        b = histogram.bucket_of(v)
        counts[b] = counts.get(b, 0) + 1
    for q in (0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0):
        got = histogram.quantile(counts, q)
        assert got is not None
        assert abs(got - exact(values, q)) / exact(values, q) <= histogram.ACCURACY + 1e-9


def test_merged_histograms_equal_one_histogram_of_all_values() -> None:
    rng = random.Random(2)
    parts = [[rng.expovariate(0.01) for _ in range(500)] for _ in range(4)]
    hists = []
    for part in parts:
        h: dict[int, int] = {}
        for v in part:
            h[histogram.bucket_of(v)] = h.get(histogram.bucket_of(v), 0) + 1
        hists.append(h)
    merged = histogram.merge(hists)
    everything = [v for part in parts for v in part]
    for q in (0.5, 0.99):
        got = histogram.quantile(merged, q)
        assert got is not None
        assert abs(got - exact(everything, q)) / exact(everything, q) <= 0.01 + 1e-9


def test_empty_and_tiny_values() -> None:
    assert histogram.quantile({}, 0.5) is None
    assert histogram.quantile({histogram.bucket_of(0): 3}, 0.5) == histogram.MIN_MS


def test_coarse_buckets_are_five_fine_ones_and_within_5_percent() -> None:
    assert histogram.COARSE_ACCURACY <= 0.05
    # ceil(fine / 5), negative buckets (values under 1 ms) included.
    assert [histogram.coarse_of(b) for b in (-6, -5, -4, -1, 0, 1, 5, 6, 10, 11)] == \
        [-1, -1, 0, 0, 0, 1, 1, 2, 2, 3]
    rng = random.Random(5)
    values = [rng.lognormvariate(0, 3) for _ in range(5000)] + [0.0, 1e-6]
    for v in values:
        coarse = histogram.coarse_value(histogram.coarse_of(histogram.bucket_of(v)))
        if v <= histogram.MIN_MS:
            assert coarse == histogram.MIN_MS
        else:
            assert abs(coarse - v) <= histogram.COARSE_ACCURACY * v * (1 + 1e-9)
    fine: dict[int, int] = {}
    for v in values:
        fine[histogram.bucket_of(v)] = fine.get(histogram.bucket_of(v), 0) + 1
    coarse_hist = histogram.coarsen(fine)
    assert sum(coarse_hist.values()) == len(values)
    for q in (0.5, 0.95, 0.99):
        got = histogram.quantile(coarse_hist, q, histogram.coarse_value)
        assert got is not None
        assert abs(got - exact(values, q)) <= histogram.COARSE_ACCURACY * exact(values, q) + 1e-9


def test_bucket_at_most_reads_at_most_its_bound_fine_and_coarse() -> None:
    rng = random.Random(7)
    bounds = [rng.lognormvariate(0, 4) for _ in range(5000)] + [
        5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10_000, 1e300]
    for ms in bounds:
        b = histogram.bucket_at_most(ms)
        readings = (histogram.bucket_value(b), histogram.coarse_value(histogram.coarse_of(b)))
        assert histogram.lowest_reading(b) == min(readings)
        if ms <= histogram.MIN_MS:
            assert b == histogram.MIN_BUCKET
            continue
        # Never past the bound, and no lower than a coarse bucket below it.
        assert all(0.85 * ms < r <= ms for r in readings), (ms, readings)
    # bucket_of's bucket of the same bound reads past it: 517 ms for 500 ms, coarse.
    assert histogram.coarse_value(histogram.coarse_of(histogram.bucket_of(500))) > 500
