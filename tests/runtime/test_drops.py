"""Counting records dropped alone (runtime/drops.py): each signal's drops in the one
counter, under their reason; an exporter's own counter takes its labels first."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

from runtime import drops, telemetry


def _value(counter: Counter, *labels: str) -> float:
    return counter.labels(*labels)._value.get()


def test_drops_are_counted_per_signal_under_their_reason() -> None:
    before = _value(telemetry.DROPPED, "logs", drops.UNENCODABLE)
    drops.count({"logs": 2, "spans": 0}, drops.UNENCODABLE)
    drops.count({"logs": 1}, drops.UNENCODABLE)
    assert _value(telemetry.DROPPED, "logs", drops.UNENCODABLE) == before + 3


def test_an_exporter_counts_in_its_own_counter_with_its_labels_first() -> None:
    own = Counter("failed", "failed records", ["exporter", "signal", "reason"],
                  registry=CollectorRegistry())
    drops.count({"metrics": 4}, drops.UNENCODABLE, own, "upstream")
    assert _value(own, "upstream", "metrics", drops.UNENCODABLE) == 4
