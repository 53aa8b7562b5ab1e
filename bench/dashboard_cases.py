"""Every query the dashboard's pages and read API make (dashboard/views.py,
dashboard/api.py, dashboard/alerts.py), as the benchmark calls them: the same
functions with the arguments a page would give, on the data of
bench/dashboard_fill.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from bench.dashboard_fill import RELEASES, ROUTES
from dashboard import views
from dashboard.timerange import parse as parse_range
from storage import schema
from storage.alerts import outbox as outbox
from storage.alerts import settings
from storage.limits import usage
from storage.queries import audit as aq
from storage.queries import errors as eq
from storage.queries import logs as lq
from storage.queries import metric_series as mq
from storage.queries import operations as oq
from storage.queries import trace_terms
from storage.store import Store


def busiest_group(store: Store, project_id: int) -> int:
    g = schema.error_groups
    with store.reader.connect() as conn:
        return int(conn.execute(select(g.c.id).where(g.c.project_id == project_id)
                                .order_by(g.c.count.desc()).limit(1)).scalar_one())


def cases(store: Store, project_id: int, end_us: int, trace_id: str
          ) -> dict[str, Callable[[], Any]]:
    now_s = end_us // 1_000_000
    hour, day, week = (parse_range(r, None, None, now_s) for r in ("1h", "24h", "7d"))
    group = busiest_group(store, project_id)
    p = project_id

    def errors(sort: str, filters: dict[str, str]) -> Callable[[], Any]:
        return lambda: views.error_list_view(store, p, ["open"], sort, 50, 0, end_us, filters)

    def traces(tr: Any, **kw: Any) -> Callable[[], Any]:
        terms = trace_terms.parse(kw.get("q"))
        return lambda: views.trace_search_view(store, p, tr, kw.get("service"), kw.get("name"),
                                               kw.get("min_ms"), kw.get("status"), terms,
                                               50, kw.get("offset", 0))

    def logs(tr: Any, **kw: Any) -> Callable[[], Any]:
        f = lq.LogFilter(start_ns=tr.start_ns, end_ns=tr.end_ns, **kw)
        return lambda: views.logs_view(store, p, f, 50, 0)

    def metric(tr: Any) -> Callable[[], Any]:
        q = mq.Query("system.cpu.utilization", tr.start_ns, tr.end_ns, tr.step_s,
                     group_by="cpu")
        return lambda: mq.metric_data(store, p, q)

    def perf(tr: Any, route: str | None = None) -> Callable[[], Any]:
        method = "GET" if route else None
        return lambda: views.performance_view(store, p, tr, "shop", "production", method,
                                              route)

    def alerts_page() -> Any:
        return (outbox.recent(store, p, 50), settings.destinations(store, p),
                settings.rules(store, p))

    return {
        "error list (open, last seen, 50 with sparklines, labels, chips)": errors("last_seen", {}),
        "error list, most frequent": errors("count", {}),
        "error list, environment=staging": errors("last_seen", {"environment": "staging"}),
        f"error list, release={RELEASES[3]} and environment=production":
            errors("last_seen", {"release": RELEASES[3], "environment": "production"}),
        "error group page (busiest group, 7-day trend, latest occurrence, facets)":
            lambda: views.group_view(store, p, group, week),
        "groups first seen in a release (API)":
            lambda: eq.groups_first_seen_in_release(store, p, RELEASES[0], 20),
        "one trace (10 spans, linked errors, logs)": lambda: views.trace_view(store, p, trace_id),
        "trace search, last hour": traces(hour),
        "trace search, 24 h": traces(day),
        "trace search, 7 days": traces(week),
        "trace search, 24 h, name 'checkout', >= 100 ms": traces(day, name="checkout",
                                                                   min_ms=100.0),
        "trace search, 7 days, status error": traces(week, status="error"),
        "trace search, 7 days, page 20 (offset 950)": traces(week, offset=950),
        "trace search, 24 h, duration>250ms": traces(day, q="duration>250ms"),
        f"trace search, 24 h, http.route={ROUTES[1]} (span bodies)":
            traces(day, q=f"http.route={ROUTES[1]}"),
        "trace search, 7 days, http.response.status_code=500 (span bodies)":
            traces(week, q="http.response.status_code=500"),
        "logs, last hour": logs(hour),
        "logs, 24 h, text 'user 42'": logs(day, text="user 42"),
        "logs, 7 days, severity >= ERROR": logs(week, min_severity=17),
        f"logs, 7 days, attribute http.route={ROUTES[1]}":
            logs(week, attributes=(("http.route", ROUTES[1]),)),
        "metric names": lambda: mq.list_metrics(store, p),
        "metric chart, 24 h, by cpu": metric(day),
        "metric chart, 7 days, by cpu": metric(week),
        "performance, 1 h": perf(hour),
        "service map, 1 h": lambda: oq.service_map(store, p, hour.start_s, hour.end_s),
        "service map, 24 h": lambda: oq.service_map(store, p, day.start_s, day.end_s),
        "service map, 7 days": lambda: oq.service_map(store, p, week.start_s, week.end_s),
        "operations, 1 h": lambda: oq.operations(store, p, hour.start_s, hour.end_s, "shop"),
        "operations, 24 h": lambda: oq.operations(store, p, day.start_s, day.end_s, "shop"),
        "operations, 7 days": lambda: oq.operations(store, p, week.start_s, week.end_s,
                                                    "shop"),
        "performance, 24 h": perf(day),
        "performance, 7 days": perf(week),
        f"performance, 7 days, route {ROUTES[0]}": perf(week, ROUTES[0]),
        "deploys and impact, 7 days (1 h windows)":
            lambda: views.deploys_view(store, p, week, None, True, "1h", end_us),
        "deploys and impact, 7 days, env production (24 h windows)":
            lambda: views.deploys_view(store, p, week, "production", False, "24h", end_us),
        "alerts page (recent alerts, destinations, rules)": alerts_page,
        "audit log, newest 50": lambda: aq.entries(store, aq.Filter(), 50),
        "audit log, project's group actions, page 3":
            lambda: aq.entries(store, aq.Filter(action="group", project_id=p), 50, 100),
        "usage, 30 days (stats page)": lambda: usage.project_usage(
            store, p, now_s // 3600 * 3600 - 719 * 3600, now_s // 3600 * 3600),
    }
