"""Histogram bucket counts added up and read as percentiles (pure arithmetic)."""

from __future__ import annotations

import pytest

from storage.queries.metric_buckets import BucketSum, attribute_text


def explicit(bounds: list[float], counts: list[int]) -> dict[str, list[object]]:
    return {"bounds": list(bounds), "counts": list(counts)}


def exponential(scale: int, offset: int, counts: list[int], zero: int = 0,
                negative: tuple[int, list[int]] = (0, [])) -> dict[str, object]:
    return {"scale": scale, "zero_count": zero, "zero_threshold": 0.0,
            "positive": {"offset": offset, "counts": counts},
            "negative": {"offset": negative[0], "counts": negative[1]}}


def test_explicit_buckets_add_up_by_bounds() -> None:
    total = BucketSum()
    assert total.add(4, 10.0, None, None, explicit([1, 2], [1, 2, 1]))
    assert total.add(4, 10.0, None, None, explicit([1, 2], [0, 4, 0]))
    assert total.intervals() == [(float("-inf"), 1.0, 1), (1.0, 2.0, 6),
                                 (2.0, float("inf"), 1)]
    assert (total.count, total.sum) == (8, 20.0)
    # Rank 4 of 8: three into (1, 2], which holds six.
    assert total.quantile(0.5) == pytest.approx(1.5)
    # The first bucket starts at 0 when its bound is positive.
    assert total.quantile(0.0625) == pytest.approx(0.5)


def test_min_and_max_of_every_point_close_the_open_buckets() -> None:
    total = BucketSum()
    total.add(2, 3.0, 0.5, 7.0, explicit([1], [1, 1]))
    assert total.quantile(1.0) == 7.0 and total.quantile(0.25) == pytest.approx(0.75)
    total.add(1, 1.0, None, None, explicit([1], [0, 1]))  # no min/max: no longer known
    assert total.quantile(1.0) == 1.0


def test_exponential_buckets_are_brought_to_the_lowest_scale() -> None:
    total = BucketSum()
    total.add(4, None, None, None, exponential(2, 8, [1, 1, 1, 1]))  # (4, 8] at scale 2
    total.add(1, None, None, None, exponential(0, 2, [1]))  # (4, 8] at scale 0
    assert total.intervals() == [(4.0, 8.0, 5)]
    total.add(1, None, None, None, exponential(1, 0, [1], zero=2, negative=(1, [3])))
    lows = [(lo, hi, c) for lo, hi, c in total.intervals()]
    # Scale 0 now: (1, 2] from index 0 of scale 1; negative index 1 of scale 1 is
    # (-2**1, -2**0.5], at scale 0 index 0: (-2, -1].
    assert lows == [(-2.0, -1.0, 3), (0.0, 0.0, 2), (1.0, 2.0, 1), (4.0, 8.0, 5)]
    assert total.quantile(0.01) is not None and -2.0 <= total.quantile(0.01) <= -1.0  # type: ignore[operator]


def test_unreadable_buckets_are_left_out() -> None:
    total = BucketSum()
    assert not total.add(3, 1.0, None, None, explicit([1, 2], [1, 2]))  # one count short
    assert not total.add(3, 1.0, None, None, {"bounds": [2, 1], "counts": [1, 1, 1]})
    assert not total.add(1, 1.0, None, None, {"scale": 99})
    assert not total.add(1, 1.0, None, None, "[nested deeper than 32 levels]")
    assert not total.add(1, 1.0, None, None, exponential(0, 0, [-1]))
    assert total.count == 0 and total.quantile(0.5) is None


def test_attribute_text() -> None:
    assert [attribute_text(v) for v in ("a", 200, True, 1.5, ["x"], None)] == [
        "a", "200", "true", "1.5", '["x"]', "null"]
