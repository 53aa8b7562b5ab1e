"""Latency histograms already read, kept per block of time and checked against the
block's rollup totals before each use, so that a page shown again reads only the
latency rows of the blocks that changed (the current hour, the current step).

Exact, not a time-to-live: every request the writer adds to a block adds to its
rollup row's count and duration sum in the same transaction as to its latency row
(storage/writer/groups.py, storage/writer/hourly.py). So while a block's totals
(count, error count, duration sum) are those the histogram was read with, its
latency rows are unchanged too, and the cached histogram is what reading them would
give. The rollup rows are a few per route and minute; the latency rows, one per
bucket, up to tens of times more: reading the totals is the cheap part.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

Totals = tuple[int, int, float]  # count, error count, duration sum (ms)
# Histograms kept, least recently used dropped first: a week of one service's routes
# by the hour is about 1,000. Each is a few dozen buckets, about 3 KB with 40: 10,000
# are at most about 30 MB of the dashboard process.
MAX_ENTRIES = 10_000


class LatencyCache:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, tuple[Totals, dict[int, int]]] = OrderedDict()
        self._lock = threading.Lock()  # the dashboard runs queries in threads

    def get(self, key: Hashable, totals: Totals) -> dict[int, int] | None:
        """The histogram read for this block, if its totals are still `totals`."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != totals:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, key: Hashable, totals: Totals, hist: dict[int, int]) -> None:
        with self._lock:
            self._entries[key] = (totals, hist)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


CACHE = LatencyCache()
