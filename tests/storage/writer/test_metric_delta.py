"""storage/writer/metric_delta.py: the cumulative-to-delta rules, without a database (the
writer's use of them, with the state in the store: tests/storage/writer/test_points.py)."""

from __future__ import annotations

import pytest

from storage.writer.metric_delta import Skip, _downscale, delta


def hist(count: int, counts: list[int], bounds: list[float] | None = None) -> dict[str, object]:
    return {"count": count, "sum": float(count),
            "buckets": {"bounds": bounds or [1.0, 2.0], "counts": counts}}


def test_first_point_counts_whole_only_with_a_start_time() -> None:
    assert delta("sum", 5, 10, {"value": 3}, None) == (5, {"value": 3}, True)
    assert delta("sum", 0, 10, {"value": 3}, None) is None


def test_same_or_older_time_is_counted_already() -> None:
    for time_ns in (10, 9):
        with pytest.raises(Skip):
            delta("sum", 5, time_ns, {"value": 4}, (5, 10, {"value": 3}))


def test_sums_subtract_and_reset_on_a_new_start_or_a_lower_value() -> None:
    state = (5, 10, {"value": 3})
    assert delta("sum", 5, 20, {"value": 7}, state) == (10, {"value": 4}, False)
    assert delta("sum", 15, 20, {"value": 7}, state) == (15, {"value": 7}, True)
    assert delta("sum", 5, 20, {"value": 2}, state) == (5, {"value": 2}, True)


def test_histograms_subtract_bucket_by_bucket() -> None:
    state = (5, 10, hist(3, [1, 2, 0]))
    assert delta("histogram", 5, 20, hist(6, [1, 4, 1]), state) == (
        10, {"count": 3, "sum": 3.0, "buckets": {"bounds": [1.0, 2.0], "counts": [0, 2, 1]}},
        False)
    # A bucket that went down, or other bounds: the sender started again.
    assert delta("histogram", 5, 20, hist(6, [0, 5, 1]), state)[2] is True
    assert delta("histogram", 5, 20, hist(6, [1, 4, 1], [1.0, 3.0]), state)[2] is True


def test_exponential_histograms_subtract_at_the_lower_scale() -> None:
    def exp(scale: int, offset: int, counts: list[int]) -> dict[str, object]:
        return {"count": sum(counts), "sum": 1.0, "buckets": {
            "scale": scale, "zero_count": 0, "zero_threshold": 0.0,
            "positive": {"offset": offset, "counts": counts},
            "negative": {"offset": 0, "counts": []}}}
    state = (5, 10, exp(2, 4, [1, 1, 1, 1]))
    start, diff, whole = delta("exponential_histogram", 5, 20, exp(1, 2, [3, 4]), state)
    assert (start, whole) == (10, False)
    assert diff["buckets"]["scale"] == 1
    assert diff["buckets"]["positive"] == {"offset": 2, "counts": [1, 2]}
    assert diff["count"] == 3


def test_downscale_merges_neighbours() -> None:
    assert _downscale(4, [1, 1, 1, 1], 1) == (2, [2, 2])
    assert _downscale(-3, [1, 2, 3], 1) == (-2, [1, 5])
    assert _downscale(7, [5], 0) == (7, [5])
