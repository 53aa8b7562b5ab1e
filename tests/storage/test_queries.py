"""storage/queries against a real store, on SQLite and on PostgreSQL. Records go in
through the real processors and the real writer, as ingest would write them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from model.records import Batch, Deploy, ErrorEvent, RequestMetric, SourceContext, Span
from processors.classify import ClassifyProcessor
from processors.grouping import GroupingProcessor
from processors.reopen import ReopenProcessor
from processors.spanmetrics import SpanMetricsProcessor
from storage import keys
from storage.groups import status as groups
from storage.queries import deploys as dq
from storage.queries import errors as eq
from storage.queries import events as evq
from storage.queries import performance as pq
from storage.queries import trace_search as ts
from storage.queries import traces as tq
from storage.store import Store
from storage.wire.batch import write_batches

NOW = 1_795_168_800  # 2026-11-20T10:00:00Z, on the hour
US = 1_000_000
NS = 1_000_000_000
MIN = 60
HOUR = 3600
PROCESSORS = [ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics"),
              GroupingProcessor("grouping"), ReopenProcessor("reopen")]


@dataclass
class Db:
    store: Store
    project: int

    def ingest(self, **records: list[Any]) -> None:
        batch = Batch(project_id=self.project, **records)
        for processor in PROCESSORS:
            batch = processor.process(batch)
        with self.store.writer.begin() as conn:
            write_batches(conn, [batch], NOW * US)


@pytest.fixture
def db(db_url: str) -> Iterator[Db]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "queries")
        keys.ensure_project(conn, "elsewhere")
    yield Db(store, project)
    store.dispose()


def err(fingerprint: str, ts_s: float, **kw: Any) -> ErrorEvent:
    return ErrorEvent(fingerprint=fingerprint, exception_class=kw.pop("cls", "ValueError"),
                      message=kw.pop("message", "bad"), backtrace=["a.py:1 in f"],
                      ts_us=int(ts_s * US), **kw)


def names(items: list[eq.GroupListItem]) -> list[str]:
    return [item.group.fingerprint for item in items]


# Error groups.

def test_group_list_filters_sorts_pages_and_draws_sparklines(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 30 * MIN), err("a", NOW - 90 * MIN),
                      err("a", NOW - 2 * 86_400), err("b", NOW - 10 * 86_400),
                      err("c", NOW - 5 * MIN), err("c", NOW - 4 * MIN)])
    groups.set_status(db.store, db.project, "b", "resolved")
    groups.set_status(db.store, db.project, "c", "ignored")
    now_us = NOW * US + 1
    everything = list(eq.STATUSES)
    listing = eq.list_groups(db.store, db.project, ["open"], now_us=now_us)
    assert names(listing.items) == ["a"]
    assert listing.total == 1
    assert listing.by_status == {"open": 1, "resolved": 1, "ignored": 1}
    assert names(eq.list_groups(db.store, db.project, everything, "count",
                                now_us=now_us).items) == ["a", "c", "b"]
    assert names(eq.list_groups(db.store, db.project, everything, "first_seen",
                                now_us=now_us).items) == ["c", "a", "b"]
    assert names(eq.list_groups(db.store, db.project, everything, "last_seen",
                                now_us=now_us).items) == ["c", "a", "b"]
    page = eq.list_groups(db.store, db.project, everything, "count", limit=1, offset=1,
                          now_us=now_us)
    assert names(page.items) == ["c"] and page.total == 3
    (a,) = listing.items
    # Hourly: the last slot is the current hour (10:00); 09:30 and 08:30 before it.
    assert a.hourly_24h[-3:] == [1, 1, 0] and sum(a.hourly_24h) == 2
    # Daily: today holds two, two days ago one.
    assert a.daily_30d[-3:] == [1, 0, 2] and sum(a.daily_30d) == 3
    with pytest.raises(ValueError):
        eq.list_groups(db.store, db.project, ["open"], "loudest")


def test_groups_of_another_project_are_not_listed(db: Db) -> None:
    db.ingest(errors=[err("mine", NOW - 60)])
    other = Db(db.store, db.project + 1)
    other.ingest(errors=[err("theirs", NOW - 60)])
    assert names(eq.list_groups(db.store, db.project, now_us=NOW * US).items) == ["mine"]


def test_one_group_its_occurrences_trend_and_history(db: Db) -> None:
    context = SourceContext("app.py", 12, "x = 1 / 0", ["def f():"], ["return x"])
    db.ingest(errors=[err("d", NOW - 125 * MIN), err("d", NOW - 50 * MIN),
                      err("d", NOW - 20 * MIN, message="latest", request_id="r-1",
                          user_id="u-1", params={"k": [1, 2]}, source_context=context,
                          trace_id="ab" * 16, span_id="cd" * 8)])
    (group,) = eq.list_groups(db.store, db.project, now_us=NOW * US).items
    assert eq.get_group(db.store, db.project, group.group.id) == group.group
    assert eq.get_group(db.store, db.project + 1, group.group.id) is None
    latest = evq.event(db.store, db.project, "d")
    assert latest is not None and latest.message == "latest"
    assert latest.source_context == {"file": "app.py", "lineno": 12,
                                     "context_line": "x = 1 / 0",
                                     "pre_context": ["def f():"], "post_context": ["return x"]}
    assert (latest.params, latest.request_id, latest.user_id, latest.trace_id) == (
        {"k": [1, 2]}, "r-1", "u-1", "ab" * 16)
    listed = eq.occurrences(db.store, db.project, "d")
    assert [o.ts_us for o in listed] == [(NOW - m * MIN) * US for m in (20, 50, 125)]
    oldest = evq.event(db.store, db.project, "d", listed[-1].id)
    assert oldest is not None and oldest.ts_us == (NOW - 125 * MIN) * US
    assert eq.occurrences(db.store, db.project, "d", before_id=listed[0].id) == listed[1:]
    # From the hourly counts (07:55 -> 07:00; 09:10 and 09:40 -> 09:00) ...
    assert eq.trend(db.store, db.project, "d", NOW - 3 * HOUR, NOW, HOUR) == [
        (NOW - 3 * HOUR, 1), (NOW - 2 * HOUR, 0), (NOW - HOUR, 2)]
    # ... and, below an hour, from the events themselves.
    ten = eq.trend(db.store, db.project, "d", NOW - HOUR, NOW, 10 * MIN)
    assert [c for _, c in ten] == [0, 1, 0, 0, 1, 0]
    groups.set_status(db.store, db.project, "d", "resolved", at_us=(NOW - 10 * MIN) * US)
    db.ingest(errors=[err("d", NOW - 5 * MIN)])
    history = eq.status_history(db.store, db.project, "d")
    assert [(h.from_status, h.to_status, h.reason) for h in history] == [
        ("resolved", "open", "recurrence"), ("open", "resolved", "user")]
    reopened = eq.get_group(db.store, db.project, group.group.id)
    assert reopened is not None and (reopened.status, reopened.reopen_count) == ("open", 1)


def test_occurrences_say_where_they_came_from(db: Db) -> None:
    logged = (NOW - 3 * MIN) * NS + 123
    db.ingest(errors=[err("o", NOW - 3 * MIN, service="shop", environment="prod",
                          release="1.2", log_time_ns=logged, occurrence_key="k" * 32),
                      err("o", NOW - 4 * MIN)])
    from_log, from_api = eq.occurrences(db.store, db.project, "o")
    assert (from_log.service, from_log.environment, from_log.release,
            from_log.log_time_ns) == ("shop", "prod", "1.2", logged)
    assert (from_api.service, from_api.environment, from_api.release,
            from_api.log_time_ns) == (None, None, None, None)
    shown = evq.event(db.store, db.project, "o")
    assert shown is not None and (shown.service, shown.log_time_ns) == ("shop", logged)
    older = evq.event(db.store, db.project, "o", from_api.id)
    assert older is not None and older.log_time_ns is None


# Traces.

def span(trace: str, sid: str, name: str, start_s: float, ms: float, parent: str = "",
         service: str = "shop", status: int = 0, kind: int = 1, **attributes: Any) -> Span:
    start = int(start_s * NS)
    return Span(trace, sid, parent, name, kind, start, start + int(ms * 1_000_000), status, "",
                service, "tests", {"service.name": service}, attributes)


T1, T2, T3 = "1" * 32, "2" * 32, "3" * 32


@pytest.fixture
def traced(db: Db) -> Db:
    db.ingest(spans=[
        span(T1, "a" * 16, "GET /checkout", NOW - 10 * MIN, 120, kind=2,
             **{"http.method": "GET", "http.route": "/checkout"}),
        span(T1, "b" * 16, "SELECT orders", NOW - 10 * MIN + 0.01, 30, "a" * 16,
             status=1, **{"db.system": "postgresql"}),
        span(T1, "c" * 16, "compute 100%_tax", NOW - 10 * MIN + 0.05, 10, "a" * 16,
             status=2),
        span(T2, "d" * 16, "GET /products", NOW - 20 * MIN, 10, service="catalog", status=1),
        span(T3, "e" * 16, "late child", NOW - 5 * MIN, 5, "f" * 16),
    ], errors=[err("traced", NOW - 10 * MIN, trace_id=T1, span_id="c" * 16)])
    return db


def found(db: Db, **filters: Any) -> list[str]:
    start = filters.pop("start_ns", (NOW - HOUR) * NS)
    return [t.trace_id for t in ts.search(db.store, db.project, start, NOW * NS,
                                          **filters).items]


def test_trace_search_filters_newest_first(traced: Db) -> None:
    assert found(traced) == [T3, T1, T2]
    assert found(traced, service="catalog") == [T2]
    assert found(traced, name="select") == [T1]  # case-insensitive substring
    assert found(traced, name="_") == [T1]  # a literal underscore, not a wildcard
    assert found(traced, name="%") == [T1]
    assert found(traced, min_duration_ns=100_000_000) == [T1]
    assert found(traced, status="error") == [T1]
    assert found(traced, status="ok") == [T1, T2]
    assert found(traced, status="unset") == [T3, T1]
    assert found(traced, start_ns=(NOW - 15 * MIN) * NS) == [T3, T1]
    assert found(traced, limit=1) == [T3]
    with pytest.raises(ValueError):
        found(traced, status="failed")


def test_trace_summaries_and_one_trace(traced: Db) -> None:
    summaries = {t.trace_id: t for t in ts.search(traced.store, traced.project,
                                                  (NOW - HOUR) * NS, NOW * NS).items}
    t1 = summaries[T1]
    assert (t1.span_count, t1.error_count, t1.services) == (3, 1, ["shop"])
    assert (t1.root_name, t1.root_service) == ("GET /checkout", "shop")
    assert t1.start_ns == (NOW - 10 * MIN) * NS and t1.duration_ns == 120_000_000
    assert summaries[T3].root_name is None and summaries[T3].matched_name == "late child"
    spans = tq.get_trace(traced.store, traced.project, T1)
    assert [s.name for s in spans] == ["GET /checkout", "SELECT orders", "compute 100%_tax"]
    assert [s.category for s in spans] == ["http", "database", "custom"]
    assert spans[1].attributes == {"db.system": "postgresql"}
    assert tq.get_trace(traced.store, traced.project, "9" * 32) == []
    assert tq.get_trace(traced.store, traced.project + 1, T1) == []
    (linked,) = eq.errors_for_trace(traced.store, traced.project, T1)
    assert (linked.fingerprint, linked.span_id) == ("traced", "c" * 16)
    assert linked.group_id == eq.list_groups(traced.store, traced.project,
                                             now_us=NOW * US).items[0].group.id


# Performance.

def req(route: str, ts_s: float, ms: float, status: int = 200, service: str = "web",
        env: str = "prod") -> RequestMetric:
    return RequestMetric("GET", route, status, ms, int(ts_s * US), service, env)


@pytest.fixture
def measured(db: Db) -> Db:
    db.ingest(requests=[
        *[req("/a", NOW - 90 * MIN, i + 1, 500 if i < 5 else 200) for i in range(100)],
        *[req("/b", NOW - 30 * MIN, 500) for _ in range(10)],
        *[req("/c", NOW - 30 * MIN, 1, service="other", env="") for _ in range(3)],
    ])
    return db


def test_series_counts_rates_and_quantiles(measured: Db) -> None:
    s = pq.series(measured.store, measured.project, NOW - 2 * HOUR, NOW, HOUR, "web", "prod")
    assert s.t == [NOW - 2 * HOUR, NOW - HOUR] and s.count == [100, 10]
    assert s.throughput_rpm == pytest.approx([100 / 60, 10 / 60])
    assert s.error_rate == pytest.approx([0.05, 0.0])
    assert s.p50_ms[0] == pytest.approx(50, rel=0.01)
    assert s.p95_ms[0] == pytest.approx(95, rel=0.01)
    assert s.p99_ms[0] == pytest.approx(99, rel=0.01)
    assert s.p50_ms[1] == pytest.approx(500, rel=0.01)
    one = pq.series(measured.store, measured.project, NOW - 2 * HOUR, NOW, HOUR, "web",
                    "prod", "GET", "/b")
    assert one.count == [0, 10] and one.error_rate[0] is None and one.p50_ms[0] is None
    anyone = pq.series(measured.store, measured.project, NOW - 2 * HOUR, NOW, HOUR)
    assert anyone.count == [100, 13]


def test_routes_services_and_one_window(measured: Db) -> None:
    routes = pq.routes(measured.store, measured.project, NOW - 2 * HOUR, NOW, "web", "prod")
    assert [(r.route, r.count, r.error_count) for r in routes] == [("/a", 100, 5),
                                                                  ("/b", 10, 0)]
    assert routes[0].avg_ms == pytest.approx(50.5)
    assert routes[0].p95_ms == pytest.approx(95, rel=0.01)
    assert [(p.service, p.env, p.count) for p in pq.services(
        measured.store, measured.project, NOW - 2 * HOUR, NOW)] == [("web", "prod", 110),
                                                                   ("other", "", 3)]
    w = pq.window(measured.store, measured.project, NOW - 2 * HOUR, NOW, env="prod")
    assert (w.count, w.error_count) == (110, 5)
    assert w.throughput_rpm == pytest.approx(110 / 120)
    assert w.p50_ms == pytest.approx(55, rel=0.01)  # rank 55 of 1..100 ms and ten 500 ms
    empty = pq.window(measured.store, measured.project, NOW, NOW + HOUR)
    assert (empty.count, empty.error_rate, empty.p95_ms) == (0, None, None)
    assert pq.has_env(measured.store, measured.project, "prod")
    assert not pq.has_env(measured.store, measured.project, "staging")



def test_window_by_service_is_one_window_per_service(measured: Db) -> None:
    start, end = NOW - 2 * HOUR, NOW
    every = pq.window_by_service(measured.store, measured.project, start, end)
    assert every == {service: pq.window(measured.store, measured.project, start, end, service)
                     for service in ("web", "other")}
    assert every["web"].error_count == 5 and every["other"].count == 3
    prod = pq.window_by_service(measured.store, measured.project, start, end, env="prod")
    assert list(prod) == ["web"]
    assert pq.window_by_service(measured.store, measured.project, NOW, NOW + HOUR) == {}

# Deploys.

@pytest.fixture
def deployed(db: Db) -> Db:
    d2 = NOW - 2 * HOUR + 30  # not on a minute: that minute is left out of both sides
    slow = [req("/x", m + 1, 200.0, 500 if i % 4 == 0 else 200)
            for m in range(d2 // MIN * MIN + MIN, NOW - MIN, MIN) for i in range(10)]
    fast = [req("/x", m + 1, 50.0) for m in range(NOW - 4 * HOUR, d2 // MIN * MIN, MIN)
            for _ in range(10)]
    db.ingest(requests=fast + slow, deploys=[
        Deploy("d1", (NOW - 3 * HOUR) * US, env="prod"),
        Deploy("d2", d2 * US, version="2.0", env="prod", deployer="ann"),
        Deploy("s1", (NOW - 90 * MIN) * US, env="staging"),
        Deploy("n1", (NOW - 80 * MIN) * US)],
        errors=[err("before", d2 - 60), err("after", d2 + 5 * MIN)])
    return db


def deploy(db: Db, sha: str) -> dq.Deploy:
    (found_deploy,) = [d for d in dq.list_deploys(db.store, db.project, 0, NOW * US)
                       if d.git_sha == sha]
    return found_deploy


def test_deploy_timeline_by_environment(deployed: Db) -> None:
    everything = dq.list_deploys(deployed.store, deployed.project, 0, NOW * US)
    assert [d.git_sha for d in everything] == ["n1", "s1", "d2", "d1"]
    prod = dq.list_deploys(deployed.store, deployed.project, 0, NOW * US, "prod", False)
    assert [d.git_sha for d in prod] == ["d2", "d1"]
    unnamed = dq.list_deploys(deployed.store, deployed.project, 0, NOW * US, None, False)
    assert [d.git_sha for d in unnamed] == ["n1"]
    assert set(dq.envs(deployed.store, deployed.project)) == {None, "prod", "staging"}


def test_correlation_compares_equal_windows_clipped_at_neighbours(deployed: Db) -> None:
    c = dq.correlate(deployed.store, deployed.project, deploy(deployed, "d2"), 2 * HOUR, NOW * US)
    # The previous prod deploy is 1 h 0 min 30 s earlier; staging and env-less ones
    # do not clip a prod deploy.
    assert (c.length_s, c.clipped_by, c.scope) == (HOUR + 30, ["previous deploy"], "prod")
    assert (c.before.start_s, c.before.end_s) == (NOW - 3 * HOUR, NOW - 2 * HOUR)
    assert (c.after.start_s, c.after.end_s) == (NOW - 2 * HOUR + MIN, NOW - HOUR + MIN)
    assert (c.before.count, c.after.count) == (600, 600)
    assert c.before.throughput_rpm == pytest.approx(10)
    assert (c.before.error_rate, c.after.error_rate) == (0.0, pytest.approx(0.3))
    assert c.before.p95_ms == pytest.approx(50, rel=0.01)
    assert c.after.p50_ms == pytest.approx(200, rel=0.01)
    assert c.worse and len(c.reasons) == 2
    assert [g.fingerprint for g in c.new_groups] == ["after"]
    recent = dq.correlate(deployed.store, deployed.project, deploy(deployed, "d2"), HOUR,
                          (NOW - 2 * HOUR + 30 + 600) * US)
    assert (recent.length_s, recent.clipped_by) == (600, ["now"])
    first = dq.correlate(deployed.store, deployed.project, deploy(deployed, "d1"), HOUR,
                         NOW * US)
    assert (first.length_s, first.clipped_by, first.worse) == (HOUR, [], False)


def test_correlation_without_requests_of_that_env_uses_every_env(deployed: Db) -> None:
    c = dq.correlate(deployed.store, deployed.project, deploy(deployed, "s1"), 15 * MIN,
                     NOW * US)
    assert c.scope == "all environments"
    assert c.before.count == 150 and c.after.count == 150


def test_too_few_requests_flag_nothing() -> None:
    def stats(count: int, errors: int, p95: float) -> pq.WindowStats:
        return pq.WindowStats(0, 60, count, errors, count, errors / count, p95, p95, p95)

    assert dq.worse_reasons(stats(10, 0, 10), stats(10, 9, 900)) == []
    assert dq.worse_reasons(stats(100, 1, 100), stats(100, 2, 110)) == []
    assert len(dq.worse_reasons(stats(100, 1, 100), stats(100, 10, 300))) == 2
