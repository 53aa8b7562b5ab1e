"""storage/queries/latency_cache.py: a histogram is given back only for the totals it
was stored with, and the least recently used go first past the bound."""

from __future__ import annotations

from storage.queries.latency_cache import LatencyCache


def test_a_histogram_is_given_back_only_while_its_totals_are_unchanged() -> None:
    cache = LatencyCache()
    cache.put("hour 5", (3, 1, 30.0), {10: 3})
    assert cache.get("hour 5", (3, 1, 30.0)) == {10: 3}
    assert cache.get("hour 5", (4, 1, 40.0)) is None  # a request was added since
    assert cache.get("hour 6", (3, 1, 30.0)) is None
    cache.put("hour 5", (4, 1, 40.0), {10: 4})
    assert cache.get("hour 5", (4, 1, 40.0)) == {10: 4}
    assert cache.get("hour 5", (3, 1, 30.0)) is None


def test_the_least_recently_used_go_first() -> None:
    cache = LatencyCache(max_entries=2)
    cache.put("a", (1, 0, 1.0), {1: 1})
    cache.put("b", (1, 0, 1.0), {1: 1})
    assert cache.get("a", (1, 0, 1.0)) is not None  # now b is the oldest
    cache.put("c", (1, 0, 1.0), {1: 1})
    assert cache.get("b", (1, 0, 1.0)) is None
    assert cache.get("a", (1, 0, 1.0)) is not None and cache.get("c", (1, 0, 1.0)) is not None
