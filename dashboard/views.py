"""What each page and its read-API twin show, composed from storage/queries.

Every function here is blocking (handlers run them in a thread) and returns one
dataclass that the page renders and the API returns as JSON, so a page and its
API answer cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dashboard.timerange import TimeRange
from dashboard.waterfall import LogMark, WaterfallRow, place_logs, waterfall
from storage.audit.log import Actor
from storage.groups import status as group_status
from storage.queries import culprit as cq
from storage.queries import deploys as dq
from storage.queries import errors as eq
from storage.queries import events as evq
from storage.queries import facets as fq
from storage.queries import feedback as fbq
from storage.queries import logs as lq
from storage.queries import members
from storage.queries import performance as pq
from storage.queries import releases as rq
from storage.queries import trace_search as ts
from storage.queries import traces as tq
from storage.queries.trace_terms import Term
from storage.store import Store

WINDOWS = {"15m": 900, "30m": 1800, "1h": 3600, "3h": 10_800, "6h": 21_600, "24h": 86_400}
DEFAULT_WINDOW = "1h"
MAX_CORRELATED = 25


def change_status(store: Store, project_id: int, group_id: int, status: str,
                  actor: Actor | None = None, next_release: bool = False,
                  snooze: group_status.Snooze | None = None) -> eq.Group | None:
    """Set a group's status (one of eq.STATUSES) as `actor`; the updated group, or None
    when the project has no such group. The Resolve/Ignore/Reopen buttons and the API
    share it."""
    group = eq.get_group(store, project_id, group_id)
    if group is None:
        return None
    group_status.set_status(store, project_id, group.fingerprint, status, actor=actor,
                            next_release=next_release, snooze=snooze)
    return eq.get_group(store, project_id, group_id)


@dataclass(frozen=True)
class GroupView:
    group: eq.Group
    event: evq.ErrorEventDetail | None  # the occurrence shown: the latest, or the one asked
    occurrences: list[eq.Occurrence]
    trend_step_s: int
    trend: list[tuple[int, int]]  # (bucket start s, count)
    deploys: list[dq.Deploy]  # markers for the trend graph
    history: list[eq.StatusChange]
    # Its environments, releases, services, levels and tags, each value with its count
    # and share; and the release it was first seen in (None: no error had one).
    facets: list[fq.Facet] = field(default_factory=list)
    first_release: str | None = None
    # The groups merged into this one (storage/groups/merge.py), each with its own counts.
    merged: list[members.MergedGroup] = field(default_factory=list)
    # What users said about its events (Sentry's user feedback), newest first.
    feedback: list[fbq.Feedback] = field(default_factory=list)


def group_view(store: Store, project_id: int, group_id: int, tr: TimeRange,
               event_id: int | None = None) -> GroupView | None:
    group = eq.get_group(store, project_id, group_id)
    if group is None:
        return None
    # A merged group's reads take in its members' rows (storage/queries/members.py).
    fp = members.of_group(store, project_id, group.id, group.fingerprint)
    event = evq.event(store, project_id, fp, event_id)
    if event is None and event_id is not None:
        return None
    return GroupView(
        group=group, event=event, occurrences=eq.occurrences(store, project_id, fp),
        trend_step_s=tr.step_s,
        trend=eq.trend(store, project_id, fp, tr.start_s, tr.end_s, tr.step_s),
        deploys=dq.list_deploys(store, project_id, tr.start_us, tr.end_us),
        history=eq.status_history(store, project_id, group.fingerprint),
        facets=fq.distribution(store, project_id, fp),
        first_release=fq.first_release(store, project_id, fp),
        merged=members.merged_groups(store, project_id, group.id),
        feedback=fbq.of_group(store, project_id, fp))


@dataclass(frozen=True)
class ErrorListView:
    page: eq.GroupList
    filters: dict[str, str]  # the facet filters applied (environment, release, service)
    labels: fq.Labels  # every value each filter can take in this project
    # {fingerprint: {"environment": [...], "release": [...]}} of the listed groups,
    # the most recently seen first: the rows' chips.
    chips: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    search: str = ""  # the search box's text ("": no search)
    # {fingerprint: users affected and first release} of the listed groups.
    facts: dict[str, fq.RowFacts] = field(default_factory=dict)
    # {fingerprint: "path in function"} of the listed groups' latest occurrences.
    culprits: dict[str, str] = field(default_factory=dict)


def error_list_view(store: Store, project_id: int, statuses: list[str], sort: str, limit: int,
                    offset: int, now_us: int, filters: dict[str, str], search: str = "",
                    issue_type: str | None = None) -> ErrorListView:
    page = eq.list_groups(store, project_id, statuses, sort, limit, offset, now_us, filters,
                          search, issue_type)
    listed = [i.group.fingerprint for i in page.items]
    with store.reader.connect() as conn:
        merged = members.of_groups(conn, project_id,
                                   {i.group.id: i.group.fingerprint for i in page.items})
    return ErrorListView(
        page, filters, fq.labels(store, project_id),
        fq.group_values(store, project_id, listed, members=merged), search,
        fq.row_facts(store, project_id, listed, merged),
        cq.culprits(store, project_id, listed, merged))


@dataclass(frozen=True)
class PerformanceView:
    services: list[pq.ServiceEnv]  # every (service, env) with requests in the range
    service: str | None  # the one shown; None: every service
    env: str | None
    method: str | None  # a route's graphs when both are set
    route: str | None
    series: pq.Series
    routes: list[pq.RouteStats]
    # Markers: this environment's deploys and env-less ones, of this service or naming none.
    deploys: list[dq.Deploy]
    # How far the routes' p95 may be from the exact value (series.quantile_accuracy
    # says it for the graphs): 5% over ranges read from the hourly rollups, else 1%.
    routes_accuracy: float = 0.01


def performance_view(store: Store, project_id: int, tr: TimeRange, service: str | None,
                     env: str | None, method: str | None = None, route: str | None = None
                     ) -> PerformanceView:
    pairs = pq.services(store, project_id, tr.start_s, tr.end_s)
    if service is None and env is None and pairs:
        service, env = pairs[0].service, pairs[0].env
    deploys = [d for d in dq.list_deploys(store, project_id, tr.start_us, tr.end_us)
               if (not env or d.env is None or d.env == env)
               and (not service or d.service is None or d.service == service)]
    return PerformanceView(
        services=pairs, service=service, env=env, method=method, route=route,
        series=pq.series(store, project_id, tr.start_s, tr.end_s, tr.step_s, service, env,
                         method, route),
        routes=pq.routes(store, project_id, tr.start_s, tr.end_s, service, env),
        deploys=deploys, routes_accuracy=pq.quantile_accuracy(tr.start_s, tr.end_s))


@dataclass(frozen=True)
class DeploysView:
    envs: list[str | None]  # environments with deploys; None: deploys without one
    env: str | None
    any_env: bool  # True: every environment is listed
    window: str  # a key of WINDOWS
    deploys: list[dq.Correlation]  # newest first, up to MAX_CORRELATED
    more: int  # deploys in the range beyond those
    series: pq.Series  # throughput and errors of that environment, for the timeline
    # {deploy id: its release health}, beside each before/after comparison.
    health: dict[int, DeployHealth] = field(default_factory=dict)


@dataclass(frozen=True)
class DeployHealth:
    """Sessions of the deploy's environment in its comparison's windows, whatever their
    release ("this release crashes more" beside "this release is slower"), and the
    health of the release it deployed (its version) since it was deployed."""

    before: rq.Window
    after: rq.Window
    release: rq.Health | None  # None: no version, or no session of it yet


def deploy_health(store: Store, project_id: int, c: dq.Correlation, now_us: int
                  ) -> DeployHealth:
    d, now_s = c.deploy, now_us // 1_000_000
    release = None
    if d.version:
        found = rq.health(store, project_id, d.ts_us // 1_000_000 // 60 * 60, now_s + 60,
                          now_s, release=d.version, environment=d.env,
                          by_environment=d.env is not None)
        release = found[0] if found else None
    return DeployHealth(
        before=rq.window(store, project_id, c.before.start_s, c.before.end_s, d.env),
        after=rq.window(store, project_id, c.after.start_s, c.after.end_s, d.env),
        release=release)


def deploys_view(store: Store, project_id: int, tr: TimeRange, env: str | None,
                 any_env: bool, window: str, now_us: int) -> DeploysView:
    envs = dq.envs(store, project_id)
    listed = dq.list_deploys(store, project_id, tr.start_us, tr.end_us, env, any_env)
    correlations = dq.correlate_all(store, project_id, listed[:MAX_CORRELATED],
                                    WINDOWS[window], now_us)
    rollup_env = env if not any_env and env and pq.has_env(store, project_id, env) else None
    return DeploysView(
        envs=envs, env=env, any_env=any_env, window=window, deploys=correlations,
        more=max(0, len(listed) - MAX_CORRELATED),
        health={c.deploy.id: deploy_health(store, project_id, c, now_us)
                for c in correlations},
        series=pq.series(store, project_id, tr.start_s, tr.end_s, tr.step_s, env=rollup_env))


@dataclass(frozen=True)
class TraceSearchView:
    services: list[str]  # suggestions for the service filter, from the spans
    operations: list[str]  # span names (of the chosen service), from the spans
    page: ts.TracePage
    limit: int
    offset: int


def trace_search_view(store: Store, project_id: int, tr: TimeRange, service: str | None,
                      name: str | None, min_duration_ms: float | None, status: str | None,
                      terms: Sequence[Term] = (), limit: int = 50, offset: int = 0
                      ) -> TraceSearchView:
    services, operations = ts.names_in_range(store, project_id, tr.start_ns, tr.end_ns,
                                             service)
    page = ts.search(store, project_id, tr.start_ns, tr.end_ns, service=service, name=name,
                     min_duration_ns=int(min_duration_ms * 1_000_000)
                     if min_duration_ms else None, status=status, terms=terms,
                     limit=limit, offset=offset)
    return TraceSearchView(services, operations, page, limit, offset)


@dataclass(frozen=True)
class TraceView:
    trace_id: str
    start_ns: int
    duration_ns: int
    rows: list[WaterfallRow]  # spans in display order, with their nesting and scale
    errors: list[eq.TraceError]
    services: list[str] = field(default_factory=list)
    # The trace's log records, oldest first (each names its span, if any); the page
    # draws them on their spans, and those on no span of the trace below it.
    logs: list[dict[str, Any]] = field(default_factory=list)  # storage/queries/logs.py

    def log_marks(self) -> tuple[dict[str, list[LogMark]], list[LogMark]]:
        return place_logs(self.rows, self.start_ns, self.duration_ns, self.logs)


def trace_view(store: Store, project_id: int, trace_id: str) -> TraceView | None:
    spans = tq.get_trace(store, project_id, trace_id)
    errors = eq.errors_for_trace(store, project_id, trace_id)
    with store.reader.connect() as conn:
        logs = lq.logs_of_trace(conn, project_id, trace_id)
    if not spans and not errors and not logs:
        return None
    rows, start, duration = waterfall(spans)
    if not spans and logs:  # a trace known only by its logs: scale to them
        start = logs[0]["time_ns"]
        duration = max(logs[-1]["time_ns"] - start, 0)
    return TraceView(trace_id, start, duration, rows, errors,
                     sorted({s.service_name for s in spans}), logs)


@dataclass(frozen=True)
class LogsView:
    services: list[str]  # suggestions for the service filter
    page: lq.LogPage


def logs_view(store: Store, project_id: int, f: lq.LogFilter, limit: int, offset: int
              ) -> LogsView:
    return LogsView(lq.services(store, project_id), lq.search(store, project_id, f, limit,
                                                              offset))
