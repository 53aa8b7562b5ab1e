"""Performance from the per-minute request rollups (fed by POST /ingest/requests and
by server spans, processors/spanmetrics.py, and apart from those by HTTP server
duration metrics, storage/writer/points.py): throughput, error rate and latency
quantiles over time, per route, and over one window.

One request must not count twice when a service reports it both as a span and in
its duration metric. So, per service and over the range asked for, the metric
rollups are used when that service has any in the range, and the others only
otherwise (restart- and multi-collector-safe: the choice is made when reading,
with no state shared while writing).

Quantiles come from merging the stored log-bucket histograms (model/histogram.py),
so they are within 1% of the exact value at that rank, over any range and step up to
six hours. Longer ranges read their whole hours from hourly rollups with coarse
buckets (five fine ones each: storage/writer/hourly.py), so their quantiles are within
5% (histogram.COARSE_ACCURACY); their counts are the same as the minutes' to the
request. A week is then 168 rows per route instead of 10,080.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    and_,
    func,
    select,
)

from model import histogram
from storage import schema
from storage.queries import rollup_reads as reads
from storage.store import Store

_SPAN_R, _METRIC_R = schema.request_rollups, schema.metric_request_rollups


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
    # How far a quantile may be from the exact value at its rank: 0.01, or 0.05 read
    # from the hourly rollups.
    quantile_accuracy: float = histogram.ACCURACY


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


def quantile_accuracy(start_s: int, end_s: int) -> float:
    """How far the quantiles of `routes` and `window` over the range may be from the
    exact value at their rank."""
    return reads.plan_for(start_s, end_s, hours=True).accuracy


def services(store: Store, project_id: int, start_s: int, end_s: int) -> list[ServiceEnv]:
    """The (service, environment) pairs with requests in the range, busiest first."""
    plan = reads.plan_for(start_s, end_s, hours=True)
    r = reads.rows(plan, plan.pieces, False, project_id, store.dialect)
    with store.reader.connect() as conn:
        rows = conn.execute(select(r.c.service, r.c.env, func.sum(r.c.count).label("n"))
                            .group_by(r.c.service, r.c.env)
                            .order_by(func.sum(r.c.count).desc(), r.c.service, r.c.env)).all()
    return [ServiceEnv(row.service, row.env, int(row.n)) for row in rows]


def series(store: Store, project_id: int, start_s: int, end_s: int, step_s: int,
           service: str | None = None, env: str | None = None, method: str | None = None,
           route: str | None = None) -> Series:
    """One point per step in [start_s, end_s); start_s should be a multiple of 60.
    Steps of whole hours over a long range read the hourly rollups (quantiles within
    5%); others the per-minute ones (within 1%)."""
    n = max(0, -(-(end_s - start_s) // step_s))
    count = [0] * n
    errors = [0] * n
    parts: list[list[dict[int, int]]] = [[] for _ in range(n)]
    # An hour must fall in one step: steps of whole hours from a whole hour.
    plan = reads.plan_for(start_s, end_s,
                          hours=step_s % reads.HOUR == 0 and start_s % reads.HOUR == 0)
    match = {"service": service, "env": env, "method": method, "route": route}
    # From the hourly rollups, read per route and hour as `routes` does: the page's
    # graphs and route table then share one reading of the latency rows (the cache's).
    group, origin, block_s = ((("method", "route"), 0, reads.HOUR) if plan.coarse
                              else ((), start_s, step_s))
    with store.reader.connect() as conn:
        totals, read = reads.read(conn, store, plan, project_id, match, group, origin, block_s)
    for b, (c, e, _d) in totals.items():
        index = (origin + int(b[-1]) * block_s - start_s) // step_s
        if 0 <= index < n:
            count[index] += c
            errors[index] += e
            parts[index].append(read.get(b, {}))
    hists = [histogram.merge(p) for p in parts]
    minutes = step_s / 60
    return Series(
        step_s=step_s,
        t=[start_s + i * step_s for i in range(n)],
        count=count,
        throughput_rpm=[c / minutes for c in count],
        error_rate=[e / c if c else None for c, e in zip(count, errors, strict=True)],
        p50_ms=[plan.quantile(h, 0.50) for h in hists],
        p95_ms=[plan.quantile(h, 0.95) for h in hists],
        p99_ms=[plan.quantile(h, 0.99) for h in hists],
        quantile_accuracy=plan.accuracy,
    )


def routes(store: Store, project_id: int, start_s: int, end_s: int,
           service: str | None = None, env: str | None = None, limit: int = 100
           ) -> list[RouteStats]:
    """Per (method, route): count, error rate, mean and p95 latency; busiest first.
    Over a long range, p95 is within 5% (the hourly rollups)."""
    plan = reads.plan_for(start_s, end_s, hours=True)
    totals: dict[tuple[str, str], list[Any]] = {}
    hists: dict[tuple[str, str], list[dict[int, int]]] = {}
    with store.reader.connect() as conn:
        blocks, read = reads.read(conn, store, plan, project_id, {"service": service, "env": env},
                             ("method", "route"), 0, reads.HOUR)
    for (method, route, _b), (c, e, d) in blocks.items():
        agg = totals.setdefault((method, route), [0, 0, 0.0])
        agg[0] += c
        agg[1] += e
        agg[2] += d
    for (method, route, _b), hist in read.items():
        hists.setdefault((method, route), []).append(hist)
    busiest = sorted(((key, agg) for key, agg in totals.items() if agg[0]),
                     key=lambda item: (-item[1][0], item[0][1], item[0][0]))[:limit]
    return [RouteStats(method, route, n, e, e / n, d / n,
                       plan.quantile(histogram.merge(hists.get((method, route), [])), 0.95))
            for (method, route), (n, e, d) in busiest]


def _window_rows(store: Store, project_id: int, start_s: int, end_s: int, env: str | None
                 ) -> tuple[reads.Plan, dict[str, list[int]], dict[str, dict[int, int]]]:
    """Per service: [count, error count] and the latency histogram over the range."""
    plan = reads.plan_for(start_s, end_s, hours=True)
    totals: dict[str, list[int]] = {}
    parts: dict[str, list[dict[int, int]]] = {}
    with store.reader.connect() as conn:
        blocks, read = reads.read(conn, store, plan, project_id, {"env": env}, ("service",), 0,
                             reads.HOUR)
    for (service, _b), (c, e, _d) in blocks.items():
        agg = totals.setdefault(service, [0, 0])
        agg[0] += c
        agg[1] += e
    for (service, _b), hist in read.items():
        parts.setdefault(service, []).append(hist)
    return plan, totals, {service: histogram.merge(h) for service, h in parts.items()}


def window(store: Store, project_id: int, start_s: int, end_s: int,
           service: str | None = None, env: str | None = None) -> WindowStats:
    """Totals over the whole minutes in [start_s, end_s); over a long range, quantiles
    within 5% (the hourly rollups)."""
    plan, totals, hists = _window_rows(store, project_id, start_s, end_s, env)
    if service is not None:
        totals = {service: totals[service]} if service in totals else {}
        hists = {service: hists[service]} if service in hists else {}
    return window_stats(plan, start_s, end_s, sum(t[0] for t in totals.values()),
                  sum(t[1] for t in totals.values()), histogram.merge(hists.values()))


def window_stats(plan: reads.Plan, start_s: int, end_s: int, count: int, errors: int,
           hist: dict[int, int]) -> WindowStats:
    minutes = (end_s - start_s) / 60
    return WindowStats(
        start_s, end_s, count, errors,
        throughput_rpm=count / minutes if minutes > 0 else None,
        error_rate=errors / count if count else None,
        p50_ms=plan.quantile(hist, 0.50), p95_ms=plan.quantile(hist, 0.95),
        p99_ms=plan.quantile(hist, 0.99))


def window_by_service(store: Store, project_id: int, start_s: int, end_s: int,
                      env: str | None = None) -> dict[str, WindowStats]:
    """`window` for every service with requests in [start_s, end_s), two queries a
    piece (the alert evaluators ask for all of them every half minute)."""
    plan, totals, hists = _window_rows(store, project_id, start_s, end_s, env)
    return {service: window_stats(plan, start_s, end_s, c, e, hists.get(service, {}))
            for service, (c, e) in totals.items()}


def has_env(store: Store, project_id: int, env: str) -> bool:
    """Whether any request was ever recorded for this environment."""
    with store.reader.connect() as conn:
        return any(conn.execute(select(table.c.minute).where(
            and_(table.c.project_id == project_id, table.c.env == env)).limit(1)).first()
            is not None for table in (_SPAN_R, _METRIC_R))
