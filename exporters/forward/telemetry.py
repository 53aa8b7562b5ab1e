"""The forwarding exporter's self-telemetry, at GET /metrics (runtime/telemetry.py
holds the collector's own). An upstream that is down does not make the collector
unhealthy, the queue is there for that; it shows here: a growing backlog, retries."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

BACKLOG_RECORDS = Gauge("sounding_forward_backlog_records",
                        "Records committed to the forwarding queue and not yet sent",
                        ["exporter"])
BACKLOG_BYTES = Gauge("sounding_forward_backlog_bytes",
                      "Bytes of request bodies in the forwarding queue", ["exporter"])
SENT = Counter("sounding_forward_sent_records", "Records the upstream acknowledged",
               ["exporter", "signal"])
FAILED = Counter("sounding_forward_failed_records",
                 "Records the upstream refused for good (a 4xx or 5xx that is not retried, "
                 "or spans an OTLP partial success rejected), dropped from the queue",
                 ["exporter", "signal", "reason"])
RETRIES = Counter("sounding_forward_retries",
                  "Sends that will be tried again: 429, 502, 503, 504, timeouts, "
                  "connection errors", ["exporter", "signal", "reason"])
REFUSED = Counter("sounding_forward_refused_records",
                  "Records refused at ingest because the forwarding queue was full",
                  ["exporter", "signal"])
