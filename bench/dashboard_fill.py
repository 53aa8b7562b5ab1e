"""The data of the dashboard query benchmark (bench/dashboard_queries.py): traces of
ten spans over seven days, error events over 1,000 fingerprints, deploys, log
records, a gauge, release health (a `sessions` bucket a minute of the day's release,
USERS_PER_HOUR users an hour) and user feedback, written through the real processors
(classify, spanmetrics, grouping) and the real writer (storage/wire/batch.py), so the
rollups and groups the queries read are the ones ingest would have made.

Several processes share the load, each writing its own slice of the week in
batches as a collector would: the writer's upserts are atomic (`count = count + n`),
so the totals are the same as one process would make. Every slice is drawn from
its own seeded generator, so a size always gives the same data.
"""

from __future__ import annotations

import multiprocessing
import random
from dataclasses import dataclass
from typing import Any

from model.records import (
    GAUGE,
    Batch,
    CheckIn,
    Deploy,
    ErrorEvent,
    Feedback,
    LogRecord,
    MetricPoint,
    SessionCount,
    SourceContext,
    Span,
)
from model.timeutil import now_us
from processors.classify import ClassifyProcessor
from processors.grouping import GroupingProcessor
from processors.spanmetrics import SpanMetricsProcessor
from receiver.sentry.sessions import mark  # the door's marks, as ingest makes them
from storage.crons.checker import Checker
from storage.store import Store
from storage.wire.batch import write_batches

SPANS_PER_TRACE = 10
DAYS = 7
WEEK_US = DAYS * 86_400_000_000
FINGERPRINTS = 1000
TRACES_PER_BATCH = 500
ERRORS_PER_BATCH = 1000
ROUTES = ["/orders/:id", "/checkout", "/products", "/cart", "/search", "/users/:id"]
RELEASES = [f"1.{i}.0" for i in range(DAYS)]  # one deploy a day
RESOURCE = {"service.name": "shop", "deployment.environment": "production"}
USERS_PER_HOUR = 200
FEEDBACK = 500
CRON_SLUG = "bench-job"


@dataclass(frozen=True)
class Plan:
    url: str
    project_id: int
    spans: int
    errors: int
    logs: int
    end_us: int

    @property
    def traces(self) -> int:
        return self.spans // SPANS_PER_TRACE

    @property
    def start_ns(self) -> int:
        return (self.end_us - WEEK_US) * 1000


def _trace(rng: random.Random, start_ns: int) -> list[Span]:
    trace_id = f"{rng.getrandbits(128):032x}"
    root_id = f"{rng.getrandbits(64):016x}"
    route = rng.choice(ROUTES)
    duration = int(rng.lognormvariate(4, 0.6) * 1_000_000)
    failed = rng.random() < 0.02
    common: dict[str, Any] = {"service_name": "shop", "scope_name": "bench",
                              "resource_attributes": RESOURCE}
    spans = [Span(trace_id, root_id, "", f"GET {route}", 2, start_ns, start_ns + duration,
                  2 if failed else 1, "", attributes={
                      "http.request.method": "GET", "http.route": route,
                      "http.response.status_code": 500 if failed else 200}, **common)]
    for i in range(SPANS_PER_TRACE - 1):
        child_start = start_ns + duration * i // SPANS_PER_TRACE
        attributes: dict[str, Any] = (
            {"db.system": "postgresql", "db.statement": "SELECT * FROM orders WHERE id = ?"}
            if i % 3 == 0 else {"messaging.system": "kafka", "messaging.destination.name": "o"}
            if i % 3 == 1 else {"app.step": i})
        spans.append(Span(trace_id, f"{rng.getrandbits(64):016x}", root_id, f"step {i}", 3,
                          child_start, child_start + duration // SPANS_PER_TRACE, 1, "",
                          attributes=attributes, **common))
    return spans


def _log(rng: random.Random, span: Span) -> LogRecord:
    severity = 17 if rng.random() < 0.05 else 9  # ERROR or INFO
    return LogRecord(span.start_ns, span.start_ns, severity, "", span.trace_id, span.span_id,
                     1, "", "shop", "bench", RESOURCE,
                     attributes={"http.route": span.attributes.get("http.route", "")},
                     body=f"handled {span.name} for user {rng.randrange(10_000)}")


def _error(rng: random.Random, i: int, ts_us: int, end_us: int) -> ErrorEvent:
    fingerprint = f"fp-{int(rng.paretovariate(1.2)) % FINGERPRINTS}"
    day = min(DAYS - 1, (ts_us - (end_us - WEEK_US)) // 86_400_000_000)
    return ErrorEvent(
        fingerprint=fingerprint, exception_class="ValueError", message=f"bad value {i}",
        backtrace=["app.py:10 in f", "app.py:3 in main"], ts_us=ts_us, params={"i": i},
        source_context=SourceContext("app.py", 10, "x = f(y)"), service="shop",
        environment="production" if i % 10 else "staging", release=RELEASES[day])


class _Writer:
    def __init__(self, url: str) -> None:
        self.store = Store(url)
        self.processors = [ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics"),
                           GroupingProcessor("grouping")]

    def write(self, batch: Batch) -> None:
        for processor in self.processors:
            batch = processor.process(batch)
        with self.store.writer.begin() as conn:
            write_batches(conn, [batch], now_us())


def _slice(args: tuple[Plan, int, int]) -> str:
    """Write worker `index` of `workers`' share; returns its first trace id."""
    plan, index, workers = args
    rng = random.Random(1000 + index)
    writer = _Writer(plan.url)
    span_ns = WEEK_US * 1000
    traces = plan.traces
    logs_every = max(1, traces // plan.logs) if plan.logs else 0
    first_trace = ""
    lo, hi = traces * index // workers, traces * (index + 1) // workers
    for first in range(lo, hi, TRACES_PER_BATCH):
        batch = Batch(project_id=plan.project_id)
        for t in range(first, min(first + TRACES_PER_BATCH, hi)):
            spans = _trace(rng, plan.start_ns + span_ns * t // traces)
            batch.spans.extend(spans)
            if logs_every and t % logs_every == 0:
                batch.logs.append(_log(rng, spans[0]))
        first_trace = first_trace or batch.spans[0].trace_id
        writer.write(batch)
    lo, hi = plan.errors * index // workers, plan.errors * (index + 1) // workers
    for first in range(lo, hi, ERRORS_PER_BATCH):
        batch = Batch(project_id=plan.project_id)
        for i in range(first, min(first + ERRORS_PER_BATCH, hi)):
            ts_us = plan.end_us - WEEK_US + WEEK_US * i // max(1, plan.errors)
            batch.errors.append(_error(rng, i, ts_us, plan.end_us))
        writer.write(batch)
    writer.store.dispose()
    return first_trace


def _extras(plan: Plan) -> None:
    """A deploy a day, one gauge (three series, a point a minute) and a cron monitor
    with an hourly run (one in ten failing), applied by the cron checker."""
    writer = _Writer(plan.url)
    batch = Batch(project_id=plan.project_id)
    start_us = plan.end_us - WEEK_US
    for day, release in enumerate(RELEASES):
        batch.deploys.append(Deploy(f"{day:040x}", start_us + day * 86_400_000_000 + 3_600_000_000,
                                    version=release, env="production", deployer="bench"))
    writer.write(batch)
    for first_minute in range(0, DAYS * 1440, 1440):
        batch = Batch(project_id=plan.project_id)
        for minute in range(first_minute, first_minute + 1440):
            for cpu in range(3):
                batch.metrics.append(MetricPoint(
                    name="system.cpu.utilization", unit="1", description="CPU busy",
                    kind=GAUGE, temporality=0, monotonic=False, service_name="shop",
                    resource_attributes=RESOURCE, scope_name="bench",
                    attributes={"cpu": str(cpu)}, start_ns=0,
                    time_ns=(start_us + minute * 60_000_000) * 1000,
                    value=(minute * 7 + cpu) % 100 / 100))
        writer.write(batch)
    _health(writer, plan.project_id, start_us)
    batch = Batch(project_id=plan.project_id)
    hourly = {"schedule_type": "crontab", "schedule": "0 * * * *", "unit": None,
              "checkin_margin": 5, "max_runtime": 30, "timezone": "UTC",
              "failure_issue_threshold": 1, "recovery_threshold": 1}
    for hour in range(DAYS * 24):
        batch.check_ins.append(CheckIn(
            f"{hour:032x}", CRON_SLUG, "error" if hour % 10 == 9 else "ok",
            start_us + hour * 3_600_000_000, duration_s=12.5 + hour % 7,
            environment="production", monitor_config=hourly))
    writer.write(batch)
    Checker(writer.store, "bench").run(plan.end_us)
    writer.store.dispose()


def _health(writer: _Writer, project_id: int, start_us: int) -> None:
    """Each minute a bucket of 60 sessions of the day's release (1 or 2 crashed), and
    each hour USERS_PER_HOUR users' own sessions; FEEDBACK user feedback."""
    start_s = start_us // 1_000_000 // 3600 * 3600
    for day, release in enumerate(RELEASES):
        batch = Batch(project_id=project_id)
        for minute in range(day * 1440, (day + 1) * 1440):
            at = start_s + minute * 60
            batch.sessions.append(SessionCount(
                mark("bench", str(minute)), release, "production", at, "", started=60,
                exited=55, errored=3, crashed=2 if minute % 15 == 0 else 1))
            if minute % 60 == 0:
                batch.sessions += [SessionCount(
                    mark("bench-user", str(minute), str(u)), release, "production", at,
                    f"user-{u}", started=1, exited=int(u % 40 != 0), crashed=int(u % 40 == 0))
                    for u in range(USERS_PER_HOUR)]
        writer.write(batch)
    batch = Batch(project_id=project_id)
    batch.feedback = [Feedback(f"{i:032x}", start_us + i * 1_000_000_000, f"Feedback {i}",
                               "feedback", name=f"User {i}", email=f"user{i}@example.com",
                               associated_event_id=f"{i + 1:032x}", release=RELEASES[-1],
                               environment="production") for i in range(FEEDBACK)]
    writer.write(batch)


def fill(plan: Plan, workers: int) -> str:
    """Write the plan's data; returns the id of a stored trace."""
    _extras(plan)
    if workers <= 1:
        return _slice((plan, 0, 1))
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        return pool.map(_slice, [(plan, i, workers) for i in range(workers)])[0]
