"""Counting records dropped alone: the one way a record may leave a request that is
otherwise kept, and never without being counted (README: "nothing dropped uncounted").

Where a record is dropped is often not where it can be counted: a decode worker keeps
no metrics, so a decoder or an exporter's encoder notes its drops per signal in what
it returns, and the event loop counts them here when that result arrives. Every door
and exporter counts through `count`, so that a drop has one counter, one set of
reasons and one place to look for both.
"""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import Counter

from model import limits
from runtime import telemetry, usage

# Why a record was dropped alone.
INVALID = "invalid"  # a door could not read it (a bad id, a value past its rules)
UNENCODABLE = "unencodable"  # an exporter could not encode it (the store cannot hold it)
FILTERED = "filtered"  # a project's inbound filter refused it (processors/filters.py)


def count(by_signal: Mapping[str, int], reason: str, counter: Counter = telemetry.DROPPED,
          *labels: str) -> None:
    """Count the records of each signal in `by_signal` dropped for `reason`, in
    `counter` (sounding_records_dropped; an exporter may keep its own, whose first
    labels are `labels`)."""
    for signal, n in by_signal.items():
        if n:
            counter.labels(*labels, signal, reason).inc(n)


def count_filtered(project_id: int, by_signal: Mapping[str, int]) -> None:
    """Count the records a project's inbound filters took out of one request: the one
    place a filtered record is counted, on the event loop (Pipeline.consume for a batch
    processed here, DecodePool.submit for one processed in a decode worker): in
    sounding_records_dropped (no project label: its labels stay bounded) and in the
    project's usage (runtime/usage.py, the Stats page), by limit category."""
    count(by_signal, FILTERED)
    for signal, n in by_signal.items():
        category = limits.BATCH_FIELDS.get(signal)
        if n and category is not None:
            usage.count(project_id, category, limits.FILTERED, n)
