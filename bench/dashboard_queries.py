"""The dashboard's queries on a full store (issue 5): the error group list, one trace,
and a 7-day performance graph, with 1 million spans and 100,000 error events in
SQLite. Run with `python -m bench dashboard` (`--spans`, `--errors` to resize).

The data goes in through the real processors and the real writer (classify,
spanmetrics, grouping; storage/writer.py), so the rollups and groups the queries
read are the ones ingest would have made. Timings are wall-clock medians and
maxima over repeated calls of the same functions the pages call.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dashboard import views
from dashboard.timerange import parse as parse_range
from processors.classify import ClassifyProcessor
from processors.grouping import GroupingProcessor
from processors.spanmetrics import SpanMetricsProcessor
from sounding.records import Batch, ErrorEvent, SourceContext, Span
from sounding.timeutil import now_us
from storage import keys
from storage.queries import errors as eq
from storage.store import Store
from storage.wire import write_batches

RESULTS = Path(__file__).with_name("RESULTS-dashboard.md")
SPANS_PER_TRACE = 10
DAYS = 7
ANALYSIS = """## Where the time goes

- The trace page was 400-500 ms at this size until `get_trace` stopped asking SQLite to
  order by start time: the planner then walked the project's whole time index instead of
  the (project, trace) primary key. It sorts the few rows in Python now.
- The 7-day performance graph misses the target. It reads every per-minute rollup row and
  latency bucket of the week (about 60,000 and 100,000 rows here) four times (series and
  route table, counts and histograms), and a covering `WITHOUT ROWID` layout measured no
  better.
- Hourly rollups written beside the per-minute ones were tried and taken out: 400 -> 283 ms
  only. At 1% accuracy an hour of one route keeps about 170 latency buckets, so with sparse
  traffic (here under two requests per route and minute) the hourly histogram rows are
  nearly as many as the per-minute ones, while every commit wrote twice the rollups.
- What would reach it: a coarser histogram kept per hour for long ranges (5% accuracy is
  about 35 buckets a decade), or the quantiles of closed hours cached after first reading.
"""
ROUTES = ["/orders/:id", "/checkout", "/products", "/cart", "/search", "/users/:id"]


def _trace(rng: random.Random, start_ns: int) -> list[Span]:
    trace_id = f"{rng.getrandbits(128):032x}"
    root_id = f"{rng.getrandbits(64):016x}"
    route = rng.choice(ROUTES)
    duration = int(rng.lognormvariate(4, 0.6) * 1_000_000)
    failed = rng.random() < 0.02
    common: dict[str, Any] = {"service_name": "shop", "scope_name": "bench",
                              "resource_attributes": {"service.name": "shop",
                                                      "deployment.environment": "production"}}
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


def _fill(store: Store, project_id: int, n_spans: int, n_errors: int, end_us: int) -> str:
    rng = random.Random(5)
    processors = [ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics"),
                  GroupingProcessor("grouping")]
    start_ns = (end_us - DAYS * 86_400_000_000) * 1000
    span_ns = DAYS * 86_400 * 10**9
    traces = n_spans // SPANS_PER_TRACE
    sample = ""
    for first in range(0, traces, 500):
        batch = Batch(project_id=project_id)
        for t in range(first, min(first + 500, traces)):
            batch.spans.extend(_trace(rng, start_ns + span_ns * t // traces))
        sample = batch.spans[0].trace_id
        _write(store, processors, batch)
    fingerprints = [f"fp-{i}" for i in range(1000)]
    for first in range(0, n_errors, 1000):
        batch = Batch(project_id=project_id)
        for i in range(first, min(first + 1000, n_errors)):
            fingerprint = fingerprints[int(rng.paretovariate(1.2)) % len(fingerprints)]
            batch.errors.append(ErrorEvent(
                fingerprint=fingerprint, exception_class="ValueError",
                message=f"bad value {i}", backtrace=["app.py:10 in f", "app.py:3 in main"],
                ts_us=end_us - int(rng.random() * DAYS * 86_400_000_000),
                params={"i": i}, source_context=SourceContext("app.py", 10, "x = f(y)")))
        _write(store, processors, batch)
    return sample


def _write(store: Store, processors: list[Any], batch: Batch) -> None:
    for processor in processors:
        batch = processor.process(batch)
    with store.writer.begin() as conn:
        write_batches(conn, [batch], now_us())


def _time(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    fn()  # warm the page cache and the statement cache
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), max(samples)


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench dashboard")
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--errors", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{Path(tmp) / 'dashboard.db'}")
        store.upgrade()
        with store.writer.begin() as conn:
            project_id = keys.ensure_project(conn, "bench")
        end = now_us()
        started = time.perf_counter()
        trace_id = _fill(store, project_id, args.spans, args.errors, end)
        fill_s = time.perf_counter() - started
        week = parse_range("7d", None, None, end // 1_000_000)
        cases: dict[str, Callable[[], Any]] = {
            "error group list (open, last seen, 50 with sparklines)":
                lambda: eq.list_groups(store, project_id, ["open"], "last_seen", 50, 0, end),
            "one trace (10 spans, linked errors)":
                lambda: views.trace_view(store, project_id, trace_id),
            "performance graph, 7 days (series, routes, deploys)":
                lambda: views.performance_view(store, project_id, week, "shop", "production",
                                               None, None),
        }
        rows = [(name, *_time(fn, args.repeat)) for name, fn in cases.items()]
        store.dispose()
    lines = [
        "# Dashboard query benchmark",
        "",
        f"{datetime.now(UTC):%Y-%m-%d}, this 2-core machine, SQLite: {args.spans:,} spans "
        f"({args.spans // SPANS_PER_TRACE:,} traces over {DAYS} days) and {args.errors:,} error "
        f"events over 1,000 fingerprints, written through the real processors and writer in "
        f"{fill_s:.0f} s. Target: under 100 ms each. {args.repeat} calls after one warm-up.",
        "",
        "| query | median ms | max ms |",
        "|---|---:|---:|",
        *[f"| {name} | {median:.1f} | {worst:.1f} |" for name, median, worst in rows],
        "",
        ANALYSIS,
    ]
    text = "\n".join(lines)
    print(text)
    RESULTS.write_text(text)
    return 0
