"""storage/writer/metric_delta.py: the cumulative-to-delta rules, without a database (the
writer's use of them, with the state in the store: tests/storage/writer/test_points.py)."""

from __future__ import annotations

import pytest

from storage.writer.metric_delta import Skip, _downscale, delta, from_json


def hist(count: int, counts: list[int], bounds: list[float] | None = None
         ) -> tuple[int, float, list[float], list[int]]:
    return (count, float(count), bounds or [1.0, 2.0], counts)


def test_first_point_counts_whole_only_with_a_start_time() -> None:
    assert delta("sum", 5, 10, 3.0, None) == (5, 3.0, True)
    assert delta("sum", 0, 10, 3.0, None) is None


def test_same_or_older_time_is_counted_already() -> None:
    for time_ns in (10, 9):
        with pytest.raises(Skip):
            delta("sum", 5, time_ns, 4.0, (5, 10, 3.0))


def test_sums_subtract_and_reset_on_a_new_start_or_a_lower_value() -> None:
    state = (5, 10, 3.0)
    assert delta("sum", 5, 20, 7.0, state) == (10, 4.0, False)
    assert delta("sum", 15, 20, 7.0, state) == (15, 7.0, True)
    assert delta("sum", 5, 20, 2.0, state) == (5, 2.0, True)


def test_a_sum_state_without_a_value_is_no_baseline() -> None:
    # Stored so by a point without a finite value and without a start time.
    assert delta("sum", 5, 20, 7.0, (5, 10, None)) is None


def test_histograms_subtract_bucket_by_bucket() -> None:
    state = (5, 10, hist(3, [1, 2, 0]))
    assert delta("histogram", 5, 20, hist(6, [1, 4, 1]), state) == (
        10, (3, 3.0, [1.0, 2.0], [0, 2, 1]), False)
    # A bucket that went down, or other bounds: the sender started again.
    assert delta("histogram", 5, 20, hist(6, [0, 5, 1]), state)[2] is True
    assert delta("histogram", 5, 20, hist(6, [1, 4, 1], [1.0, 3.0]), state)[2] is True
    # So does a lower count, or another number of buckets.
    assert delta("histogram", 5, 20, hist(2, [1, 2, 0]), state)[2] is True
    assert delta("histogram", 5, 20, hist(6, [1, 4, 1, 0]), state)[2] is True


def test_a_histogram_state_without_buckets_or_a_sum_subtracts_what_it_has() -> None:
    state = (5, 10, (3, None, [1.0, 2.0], []))
    assert delta("histogram", 5, 20, hist(6, [1, 4, 1]), state) == (
        10, (3, None, [1.0, 2.0], [1, 4, 1]), False)


def test_states_read_back_from_their_json() -> None:
    assert from_json("sum", {"value": 2.5}) == 2.5
    assert from_json("histogram", {"count": 3, "sum": 1.5, "buckets": {
        "bounds": [1.0], "counts": [1, 2]}}) == (3, 1.5, [1.0], [1, 2])
    exp = {"count": 1, "sum": 1.0, "buckets": {"scale": 0}}
    assert from_json("exponential_histogram", exp) == exp


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
