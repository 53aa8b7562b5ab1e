"""Self-telemetry, exposed at GET /metrics in the Prometheus text format.

Bad input is counted here rather than logged item by item: a misbehaving client
must not be able to flood the log.
"""

from __future__ import annotations

import platform
from importlib import metadata

from prometheus_client import Counter, Gauge, Histogram, Info, disable_created_metrics

# No `*_created` series: one more series per counter and histogram child that no
# dashboard reads (a scraper sees a restart as a counter reset anyway). Before any
# metric is collected; process-wide, so the forward exporter's are covered too.
disable_created_metrics()

BUILD = Info("sounding_build",
              "The running Sounding: its version, Python's, and the event loop of serve")


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
                      "Records handed to the writer and not yet committed")
QUEUE_BYTES = Gauge("sounding_queue_bytes",
                    "Request bytes handed to the writer and not yet committed")
COMMIT_RECORDS = Histogram("sounding_commit_records", "Records written per group commit",
                           buckets=(1, 10, 100, 500, 1_000, 2_500, 5_000, 10_000, 50_000))
COMMIT_SECONDS = Histogram("sounding_commit_seconds", "Duration of one group commit",
                           buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
OFFLOADED = Counter("sounding_decode_offloaded_requests",
                    "Requests (OTLP, large Sentry envelopes) decoded and processed by a "
                    "decode worker")
BODY_BYTES = Gauge("sounding_inflight_body_bytes",
                   "Bytes held by request bodies being read or inflated", ["receiver"])
OPEN_CONNECTIONS = Gauge("sounding_open_connections", "Open HTTP connections", ["receiver"])
EVENT_LOOP_LAG = Gauge("sounding_event_loop_lag_seconds",
                       "How late the event loop turns around, smoothed (admission control)")
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
