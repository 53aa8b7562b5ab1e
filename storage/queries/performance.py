"""Performance from the per-minute request rollups (fed by POST /ingest/requests and
by server spans, processors/spanmetrics.py, and apart from those by HTTP server
duration metrics, storage/writer_metrics.py): throughput, error rate and latency
quantiles over time, per route, and over one window.

One request must not count twice when a service reports it both as a span and in
its duration metric. So, per service and over the range asked for, the metric
rollups are used when that service has any in the range, and the others only
otherwise (restart- and multi-collector-safe: the choice is made when reading,
with no state shared while writing).

Quantiles come from merging the stored log-bucket histograms (sounding/histogram.py),
so they are within 1% of the exact value at that rank, over any range and step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, FromClause, Subquery, and_, func, literal, select, union_all

from sounding import histogram
from storage import schema
from storage.store import Store

_SPAN_R, _SPAN_L = schema.request_rollups, schema.request_latency
_METRIC_R, _METRIC_L = schema.metric_request_rollups, schema.metric_request_latency


@dataclass(frozen=True)
class ServiceEnv:
    service: str
    env: str
    count: int


@dataclass(frozen=True)
class Series:
    step_s: int
    t: list[int]  # bucket starts, epoch seconds
    count: list[int]
    throughput_rpm: list[float]  # requests per minute
    error_rate: list[float | None]  # 0..1; None where there were no requests
    p50_ms: list[float | None]
    p95_ms: list[float | None]
    p99_ms: list[float | None]


@dataclass(frozen=True)
class RouteStats:
    method: str
    route: str
    count: int
    error_count: int
    error_rate: float
    avg_ms: float
    p95_ms: float | None


@dataclass(frozen=True)
class WindowStats:
    start_s: int
    end_s: int
    count: int
    error_count: int
    throughput_rpm: float | None  # None for an empty window length
    error_rate: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None


def _where(table: FromClause, project_id: int, start_s: int, end_s: int, service: str | None,
           env: str | None, method: str | None = None, route: str | None = None
           ) -> ColumnElement[bool]:
    """None means any; the rollups store a missing service or env as ''."""
    clauses = [table.c.project_id == project_id, table.c.minute >= start_s,
               table.c.minute < end_s]
    for column, value in (("service", service), ("env", env), ("method", method),
                          ("route", route)):
        if value is not None:
            clauses.append(table.c[column] == value)
    return and_(*clauses)


def _chosen(spans: FromClause, metric: FromClause, project_id: int, start_s: int,
            end_s: int) -> Subquery:
    """The rows of a pair of tables (rollups or latency) that count: a service's
    metric rows when it has any in [start_s, end_s), its other rows otherwise."""
    in_range = _where(_METRIC_R, project_id, start_s, end_s, None, None)
    measured = select(_METRIC_R.c.service).where(in_range).distinct()
    return union_all(
        select(*spans.c).where(_where(spans, project_id, start_s, end_s, None, None),
                               spans.c.service.not_in(measured)),
        select(*metric.c).where(_where(metric, project_id, start_s, end_s, None, None)),
    ).subquery()


def _tables(project_id: int, start_s: int, end_s: int) -> tuple[Subquery, Subquery]:
    """(rollups, latency) as they count over the range."""
    return (_chosen(_SPAN_R, _METRIC_R, project_id, start_s, end_s),
            _chosen(_SPAN_L, _METRIC_L, project_id, start_s, end_s))


def services(store: Store, project_id: int, start_s: int, end_s: int) -> list[ServiceEnv]:
    """The (service, environment) pairs with requests in the range, busiest first."""
    _R, _L = _tables(project_id, start_s, end_s)
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(_R.c.service, _R.c.env, func.sum(_R.c.count).label("n"))
            .where(_where(_R, project_id, start_s, end_s, None, None))
            .group_by(_R.c.service, _R.c.env)
            .order_by(func.sum(_R.c.count).desc(), _R.c.service, _R.c.env)).all()
    return [ServiceEnv(r.service, r.env, int(r.n)) for r in rows]


def series(store: Store, project_id: int, start_s: int, end_s: int, step_s: int,
           service: str | None = None, env: str | None = None, method: str | None = None,
           route: str | None = None) -> Series:
    """One point per step in [start_s, end_s); start_s should be a multiple of 60."""
    n = max(0, -(-(end_s - start_s) // step_s))
    count = [0] * n
    errors = [0] * n
    hists: list[dict[int, int]] = [{} for _ in range(n)]
    _R, _L = _tables(project_id, start_s, end_s)
    with store.reader.connect() as conn:
        slot = ((_R.c.minute - start_s) // literal(step_s)).label("slot")
        for index, c, e in conn.execute(
                select(slot, func.sum(_R.c.count), func.sum(_R.c.error_count))
                .where(_where(_R, project_id, start_s, end_s, service, env, method, route))
                .group_by(slot)):
            if 0 <= int(index) < n:
                count[int(index)] += int(c)
                errors[int(index)] += int(e)
        lslot = ((_L.c.minute - start_s) // literal(step_s)).label("slot")
        for index, bucket, c in conn.execute(
                select(lslot, _L.c.bucket, func.sum(_L.c.count))
                .where(_where(_L, project_id, start_s, end_s, service, env, method, route))
                .group_by(lslot, _L.c.bucket)):
            if 0 <= int(index) < n:
                hists[int(index)][int(bucket)] = int(c)
    minutes = step_s / 60
    return Series(
        step_s=step_s,
        t=[start_s + i * step_s for i in range(n)],
        count=count,
        throughput_rpm=[c / minutes for c in count],
        error_rate=[e / c if c else None for c, e in zip(count, errors, strict=True)],
        p50_ms=[histogram.quantile(h, 0.50) for h in hists],
        p95_ms=[histogram.quantile(h, 0.95) for h in hists],
        p99_ms=[histogram.quantile(h, 0.99) for h in hists],
    )


def routes(store: Store, project_id: int, start_s: int, end_s: int,
           service: str | None = None, env: str | None = None, limit: int = 100
           ) -> list[RouteStats]:
    """Per (method, route): count, error rate, mean and p95 latency; busiest first."""
    _R, _L = _tables(project_id, start_s, end_s)
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(_R.c.method, _R.c.route, func.sum(_R.c.count).label("n"),
                   func.sum(_R.c.error_count).label("e"),
                   func.sum(_R.c.duration_sum_ms).label("d"))
            .where(_where(_R, project_id, start_s, end_s, service, env))
            .group_by(_R.c.method, _R.c.route)
            .order_by(func.sum(_R.c.count).desc(), _R.c.route).limit(limit)).all()
        hists: dict[tuple[str, str], dict[int, int]] = {(r.method, r.route): {} for r in rows}
        if hists:
            for method, route, bucket, c in conn.execute(
                    select(_L.c.method, _L.c.route, _L.c.bucket, func.sum(_L.c.count))
                    .where(_where(_L, project_id, start_s, end_s, service, env))
                    .group_by(_L.c.method, _L.c.route, _L.c.bucket)):
                hist = hists.get((method, route))
                if hist is not None:
                    hist[int(bucket)] = int(c)
    return [RouteStats(r.method, r.route, int(r.n), int(r.e), int(r.e) / int(r.n),
                       float(r.d) / int(r.n), histogram.quantile(hists[(r.method, r.route)], 0.95))
            for r in rows if r.n]


def window(store: Store, project_id: int, start_s: int, end_s: int,
           service: str | None = None, env: str | None = None) -> WindowStats:
    """Totals over the whole minutes in [start_s, end_s)."""
    _R, _L = _tables(project_id, start_s, end_s)
    with store.reader.connect() as conn:
        row: Any = conn.execute(
            select(func.sum(_R.c.count), func.sum(_R.c.error_count))
            .where(_where(_R, project_id, start_s, end_s, service, env))).one()
        hist = {int(b): int(c) for b, c in conn.execute(
            select(_L.c.bucket, func.sum(_L.c.count))
            .where(_where(_L, project_id, start_s, end_s, service, env))
            .group_by(_L.c.bucket))}
    return _stats(start_s, end_s, int(row[0] or 0), int(row[1] or 0), hist)


def _stats(start_s: int, end_s: int, count: int, errors: int, hist: dict[int, int]
           ) -> WindowStats:
    minutes = (end_s - start_s) / 60
    return WindowStats(
        start_s, end_s, count, errors,
        throughput_rpm=count / minutes if minutes > 0 else None,
        error_rate=errors / count if count else None,
        p50_ms=histogram.quantile(hist, 0.50), p95_ms=histogram.quantile(hist, 0.95),
        p99_ms=histogram.quantile(hist, 0.99))


def window_by_service(store: Store, project_id: int, start_s: int, end_s: int,
                      env: str | None = None) -> dict[str, WindowStats]:
    """`window` for every service with requests in [start_s, end_s), in two queries
    (the alert evaluators ask for all of them every half minute)."""
    _R, _L = _tables(project_id, start_s, end_s)
    where_r = _where(_R, project_id, start_s, end_s, None, env)
    where_l = _where(_L, project_id, start_s, end_s, None, env)
    with store.reader.connect() as conn:
        totals = conn.execute(
            select(_R.c.service, func.sum(_R.c.count), func.sum(_R.c.error_count))
            .where(where_r).group_by(_R.c.service)).all()
        hists: dict[str, dict[int, int]] = {}
        for service, bucket, c in conn.execute(
                select(_L.c.service, _L.c.bucket, func.sum(_L.c.count))
                .where(where_l).group_by(_L.c.service, _L.c.bucket)):
            hists.setdefault(service, {})[int(bucket)] = int(c)
    return {service: _stats(start_s, end_s, int(c or 0), int(e or 0), hists.get(service, {}))
            for service, c, e in totals}


def has_env(store: Store, project_id: int, env: str) -> bool:
    """Whether any request was ever recorded for this environment."""
    with store.reader.connect() as conn:
        return any(conn.execute(select(table.c.minute).where(
            and_(table.c.project_id == project_id, table.c.env == env)).limit(1)).first()
            is not None for table in (_SPAN_R, _METRIC_R))
