"""Self-telemetry, exposed at GET /metrics in the Prometheus text format.

Bad input is counted here rather than logged item by item: a misbehaving client
must not be able to flood the log.

In a serve group (runtime/group.py) every worker counts in prometheus_client's
multiprocess mode: the leader sets PROMETHEUS_MULTIPROC_DIR, a directory of the
group's, before it starts them, each process keeps its values in files there, and
whichever worker answers GET /metrics reads them all (`registry`). Chosen over the
workers reporting to the leader because a scrape then costs no round trip through
every worker, a worker that died keeps its counts (counters never go backwards),
and its gauges leave with it (the leader marks it dead). Each gauge says how its
processes' values add up (`multiprocess_mode`; ignored in one process).
"""

from __future__ import annotations

import asyncio
import functools
import os
import platform
from collections.abc import Callable, Iterator
from importlib import metadata
from typing import Any

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    Metric,
    disable_created_metrics,
)
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

# No `*_created` series: one more series per counter and histogram child that no
# dashboard reads (a scraper sees a restart as a counter reset anyway). Before any
# metric is collected; process-wide, so the forward exporter's are covered too.
disable_created_metrics()

BUILD = Info("sounding_build",
              "The running Sounding: its version, Python's, and the event loop of serve")


@functools.cache
def child(metric: Counter | Histogram, *labels: str) -> Any:
    """`metric.labels(*labels)`, looked up once: labels() costs about 4 µs (a tuple, a
    lock, a dict), and a request's own counters asked it twice. Only for label values
    from a fixed set (endpoints, signals): each one is kept for good."""
    return metric.labels(*labels)


def once_per_turn(update: Callable[[], None]) -> Callable[[], None]:
    """A function that runs `update` at the end of this turn of the event loop, once
    however often it is called in the turn (at once, with no loop running). For gauges
    that follow a value changed by every request (the write queue, the bodies being
    read): under load a turn serves several requests, and a gauge's `set` (a lock, a
    float, and in a serve group a write to a shared file) is then paid once per turn."""
    due = False

    def run() -> None:
        nonlocal due
        due = False
        update()

    def soon() -> None:
        nonlocal due
        if due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            update()
            return
        due = True
        loop.call_soon(run)

    return soon


def build_info(event_loop: str = "") -> None:
    """Set sounding_build_info; `serve` names its event loop (runtime/eventloop.py)."""
    BUILD.info({"version": metadata.version("sounding"), "python": platform.python_version(),
                "implementation": platform.python_implementation(),
                **({"event_loop": event_loop} if event_loop else {})})


build_info()

ACCEPTED = Counter("sounding_records_accepted", "Records committed to the store", ["signal"])
RECORDS_REFUSED = Counter(
    "sounding_records_refused",
    "Records of requests answered with an error after decoding: overloaded (the queue is "
    "full), unavailable (the store cannot be reached) or failed (the commit failed)",
    ["signal", "reason"])
REFUSED = Counter("sounding_requests_refused",
                  "Requests answered with an error status", ["endpoint", "reason"])
DROPPED = Counter("sounding_records_dropped",
                  "Records dropped one by one while the rest of their request was kept",
                  ["signal", "reason"])
SENTRY_ITEMS = Counter(
    "sounding_sentry_items",
    "Items of Sentry envelopes and store events acknowledged, by type: events and "
    "transactions become records, every other type is accepted and ignored",
    ["type"])
QUEUE_RECORDS = Gauge("sounding_queue_records",
                      "Records handed to the writer and not yet committed",
                      multiprocess_mode="livesum")
QUEUE_BYTES = Gauge("sounding_queue_bytes",
                    "Request bytes handed to the writer and not yet committed",
                    multiprocess_mode="livesum")
COMMIT_RECORDS = Histogram("sounding_commit_records", "Records written per group commit",
                           buckets=(1, 10, 100, 500, 1_000, 2_500, 5_000, 10_000, 50_000))
COMMIT_SECONDS = Histogram("sounding_commit_seconds", "Duration of one group commit",
                           buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
OFFLOADED = Counter("sounding_decode_offloaded_requests",
                    "Requests (OTLP, large Sentry envelopes) decoded and processed by a "
                    "decode worker")
BODY_BYTES = Gauge("sounding_inflight_body_bytes",
                   "Bytes held by request bodies being read or inflated", ["receiver"],
                   multiprocess_mode="livesum")
OPEN_CONNECTIONS = Gauge("sounding_open_connections", "Open HTTP connections", ["receiver"],
                         multiprocess_mode="livesum")
# In a group: the latest of its workers' event loops.
EVENT_LOOP_LAG = Gauge("sounding_event_loop_lag_seconds",
                       "How late the event loop turns around, smoothed (admission control)",
                       multiprocess_mode="livemax")
DECODE_WORKER_RESTARTS = Counter(
    "sounding_decode_worker_restarts",
    "Decode workers that stopped (killed, crashed) and were started again")
REQUEST_SECONDS = Histogram("sounding_request_seconds", "Ingest request latency", ["endpoint"],
                            buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5))
ALERTS = Counter(
    "sounding_alerts",
    "Alert deliveries by outcome, per destination: sent, retried (an attempt that will "
    "be tried again), failed (refused for good or given up) and folded (into a digest)",
    ["destination", "status"])


MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's own variable


def registry() -> CollectorRegistry:
    """What GET /metrics exposes: this process's metrics, or in a serve group every
    process's, read from the group's files."""
    directory = os.environ.get(MULTIPROC_DIR)
    if not directory:
        return REGISTRY
    merged = CollectorRegistry()
    merged.register(_Group(directory))
    return merged


class _Group(Collector):
    """Every process's values from the group's files, and, as one process shows them,
    each family nothing has counted yet (a file holds only values; a scraper should
    see every family from the start) and the build's Info, which multiprocess mode
    does not keep (it is the same in every process)."""

    def __init__(self, directory: str) -> None:
        self._files = MultiProcessCollector(None, path=directory)

    def collect(self) -> Iterator[Metric]:
        families = list(self._files.collect())
        yield from families
        counted = {family.name for family in families}
        for family in REGISTRY.collect():
            if not family.name.startswith("sounding_") or family.name in counted:
                continue
            if family.type == "info":
                yield family
            else:
                yield Metric(family.name, family.documentation, family.type, family.unit)
