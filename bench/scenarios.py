"""What the benchmark sends: one scenario per endpoint and payload shape."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from bench import payloads, payloads_metrics, payloads_sentry
from bench.server import BENCH_KEY

BodySource = Callable[[int], Callable[[int], bytes]]  # worker -> (request number -> body)


@dataclass(frozen=True)
class Scenario:
    name: str
    label: str
    path: str
    content_type: str
    records: int  # records per request
    unit: str  # what a record is, for the table
    body_source: BodySource
    # Span and log bodies must differ per request (spans are deduplicated by id, log
    # records by a hash of their bytes); error and
    # request-metric bodies are appended as they come, so one body can be resent.
    unique_bodies: bool
    connections: int  # connections in total when saturating
    stored_sql: str  # counts what this scenario stored
    transport: str = "http"
    prebuild_rate: int = 0  # unique bodies built ahead, per second of the window


def _traces(make: Callable[[int], payloads.Template]) -> BodySource:
    def source(worker: int) -> Callable[[int], bytes]:
        templates = [make(worker * 8 + i) for i in range(4)]

        def body(n: int) -> bytes:
            # Unique across workers: the worker number sits above the request number.
            return templates[n % len(templates)].render((worker << 40) | n, time.time_ns())
        return body
    return source


def _fixed(make: Callable[[int], bytes]) -> BodySource:
    def source(worker: int) -> Callable[[int], bytes]:
        body = make(worker)
        return lambda n: body
    return source


SPANS_SQL = "SELECT count(*) FROM spans"
LOGS_SQL = "SELECT count(*) FROM logs"
ERRORS_SQL = "SELECT count(*) FROM error_events"
REQUESTS_SQL = "SELECT coalesce(sum(count), 0) FROM request_rollups"
POINTS_SQL = "SELECT count(*) FROM metric_points"
# A Sentry envelope of the benchmark carries one event or one transaction: an error
# row, or a root span (of a trace of SPANS_PER_TRANSACTION).
ENVELOPES_SQL = ("SELECT (SELECT count(*) FROM error_events) + "
                 "(SELECT count(*) FROM spans WHERE length(parent_span_id) = 0)")
# Every session item of the benchmark adds two marks (bench/payloads_sentry.py).
SESSIONS_SQL = "SELECT count(*) / 2 FROM session_marks"
# The benchmark's project is the only one of a fresh database; the key goes in the
# query, as browser SDKs send it.
SENTRY_PATH = f"/api/1/envelope/?sentry_key={BENCH_KEY}"
# Process slots per load worker: the same series come back every METRIC_SLOTS
# requests, as one process's do every export interval, and never two at once (a
# worker has a quarter as many connections), so each series' exports arrive in
# order. Few enough that every series is seen in the warm-up, and the measured window
# holds what a collector mostly does: differences from a known last point.
METRIC_SLOTS = 16


def _metrics(worker: int) -> Callable[[int], bytes]:
    templates = [payloads_metrics.metrics_proto(worker * METRIC_SLOTS + i)
                 for i in range(METRIC_SLOTS)]

    def body(n: int) -> bytes:
        return templates[n % METRIC_SLOTS].render(n // METRIC_SLOTS, time.time_ns())
    return body

SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("traces_proto", "OTLP/HTTP protobuf, 512 spans", "/ingest/v1/traces",
             "application/x-protobuf", payloads.SPANS_PER_REQUEST, "spans",
             _traces(payloads.traces_proto), True, 16, SPANS_SQL, prebuild_rate=120),
    Scenario("traces_json", "OTLP/HTTP JSON, 512 spans", "/ingest/v1/traces",
             "application/json", payloads.SPANS_PER_REQUEST, "spans",
             _traces(payloads.traces_json), True, 16, SPANS_SQL, prebuild_rate=50),
    Scenario("traces_grpc", "OTLP/gRPC, 512 spans",
             "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
             "application/grpc", payloads.SPANS_PER_REQUEST, "spans",
             _traces(payloads.traces_proto), True, 16, SPANS_SQL, transport="grpc",
             prebuild_rate=120),
    Scenario("logs_proto", "OTLP/HTTP protobuf, 512 log records", "/ingest/v1/logs",
             "application/x-protobuf", payloads.LOGS_PER_REQUEST, "records",
             _traces(payloads.logs_proto), True, 16, LOGS_SQL, prebuild_rate=120),
    Scenario("errors_batch", "/ingest/errors/batch, 100 errors", "/ingest/errors/batch",
             "application/json", payloads.ERRORS_PER_BATCH, "errors",
             _fixed(payloads.errors_batch), False, 8, ERRORS_SQL),
    Scenario("errors_single", "/ingest/errors, one error", "/ingest/errors",
             "application/json", 1, "requests", _fixed(payloads.error_single), False, 48,
             ERRORS_SQL),
    Scenario("requests", "/ingest/requests, 1,000 items", "/ingest/requests",
             "application/json", payloads.REQUESTS_PER_BATCH, "items",
             _fixed(payloads.requests_batch), False, 8, REQUESTS_SQL),
    Scenario("sentry_event", "Sentry envelope, one ~10 KB error event", SENTRY_PATH,
             "application/x-sentry-envelope", 1, "events",
             payloads_sentry.worker_bodies(payloads_sentry.sentry_event), True, 48,
             ERRORS_SQL),
    Scenario("sentry_mix", "Sentry envelopes: events, transactions, client reports",
             SENTRY_PATH, "application/x-sentry-envelope", 1, "envelopes",
             payloads_sentry.worker_bodies(payloads_sentry.sentry_mix), True, 48,
             ENVELOPES_SQL),
    Scenario("sentry_sessions", "Sentry envelopes: one session update or aggregate each",
             SENTRY_PATH, "application/x-sentry-envelope", 1, "session items",
             payloads_sentry.worker_bodies(payloads_sentry.sentry_sessions), True, 48,
             SESSIONS_SQL),
    Scenario("metrics_proto", "OTLP/HTTP protobuf metrics, cumulative, 200 points",
             "/ingest/v1/metrics", "application/x-protobuf",
             payloads_metrics.POINTS_PER_REQUEST, "points", _metrics, True, 8, POINTS_SQL),
)}
