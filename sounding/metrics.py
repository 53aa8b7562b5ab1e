"""Self-telemetry, exposed at GET /metrics in the Prometheus text format.

Bad input is counted here rather than logged item by item: a misbehaving client
must not be able to flood the log.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

ACCEPTED = Counter("sounding_records_accepted", "Records committed to the store", ["signal"])
REFUSED = Counter("sounding_requests_refused",
                  "Requests answered with an error status", ["endpoint", "reason"])
DROPPED = Counter("sounding_records_dropped",
                  "Records dropped one by one while the rest of their request was kept",
                  ["signal", "reason"])
QUEUE_RECORDS = Gauge("sounding_queue_records", "Records waiting for the writer")
QUEUE_BYTES = Gauge("sounding_queue_bytes", "Approximate bytes waiting for the writer")
COMMIT_RECORDS = Histogram("sounding_commit_records", "Records written per group commit",
                           buckets=(1, 10, 100, 1_000, 5_000, 10_000, 50_000, 100_000))
COMMIT_SECONDS = Histogram("sounding_commit_seconds", "Duration of one group commit",
                           buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
REQUEST_SECONDS = Histogram("sounding_request_seconds", "Ingest request latency", ["endpoint"],
                            buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5))
