"""The JSON read API under /api/v1/projects/{project}/...: what the pages show, as
documents (docs/api.md). Times keep the schema's units, named by their
suffix: `_us` microseconds, `_ns` nanoseconds, `_s` (and series `t`) seconds."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tornado.web import HTTPError

from dashboard import views
from dashboard.base import DashboardHandler
from dashboard.logargs import log_filter
from dashboard.snooze_args import snooze_json
from dashboard.timerange import TimeRange
from dashboard.traceargs import MAX_LIMIT as TRACE_LIMIT
from dashboard.traceargs import MAX_OFFSET, trace_args
from storage.groups.status import Snooze
from storage.queries import errors as eq
from storage.queries import facets as fq
from storage.queries import logs as lq
from storage.queries import metric_series as mq

MAX_LIMIT = 500
MAX_STEPS = 1000  # points per line of a metric chart
MAX_FILTERS = 10
MAX_GROUPS = 100
MAX_SEARCH = 200  # characters of the error list's search


def statuses_arg(raw: str | None) -> list[str]:
    """`status=open` (the default), or several: `status=open,resolved`; `all` for every."""
    if raw is None:
        return ["open"]
    if raw == "all":
        return list(eq.STATUSES)
    wanted = [s.strip() for s in raw.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in eq.STATUSES]
    if unknown or not wanted:
        raise HTTPError(400, f"status must be one or more of {', '.join(eq.STATUSES)} "
                             "(comma-separated), or all")
    return wanted


def facet_filters(handler: DashboardHandler) -> dict[str, str]:
    """`environment`, `release` and `service` (each at most 200 characters): the error
    list's filters; an empty one is no filter."""
    filters = {}
    for name in fq.FILTERS:
        value = handler.get_argument(name, None)
        if not value:
            continue
        if len(value) > fq.MAX_VALUE:
            raise HTTPError(400, f"{name!r} must be at most {fq.MAX_VALUE} characters")
        filters[name] = value
    return filters


def search_arg(handler: DashboardHandler) -> str:
    """`q`: the error list's search (class, message or fingerprint, any case)."""
    value = (handler.get_argument("q", None) or "").strip()
    if len(value) > MAX_SEARCH:
        raise HTTPError(400, f"'q' must be at most {MAX_SEARCH} characters")
    return value


def issue_type_arg(raw: str | None) -> str | None:
    """`type`: `error` or `performance` (docs/apm.md#performance-issues); none: both."""
    if not raw:
        return None
    if raw not in eq.ISSUE_TYPES:
        raise HTTPError(400, f"type must be one of {', '.join(eq.ISSUE_TYPES)}")
    return raw


def sort_arg(raw: str | None) -> str:
    sort = raw or "last_seen"
    if sort not in eq.SORTS:
        raise HTTPError(400, f"sort must be one of {', '.join(eq.SORTS)}")
    return sort


def metric_query(handler: DashboardHandler, name: str, tr: TimeRange) -> mq.Query:
    """One metric chart's parameters (docs/api.md), every bad one a 400
    naming it: `step` (seconds), `agg`, `kind`, `service`, `filter=key=value`
    (repeated: all must match), `group_by` (an attribute key), `max_groups`."""
    step = handler.int_arg("step", tr.step_s, 1, 400 * 86_400) or tr.step_s
    if -(-(tr.end_s - tr.start_s) // step) > MAX_STEPS:
        raise HTTPError(400, f"'step' of {step} s gives more than {MAX_STEPS} points over "
                             "this range: take a larger one")
    kind = handler.arg("kind")
    if kind is not None and kind not in mq.KINDS:
        raise HTTPError(400, f"'kind' must be one of {', '.join(mq.KINDS)}")
    agg = handler.arg("agg")
    known = sorted({a for allowed in mq.AGGREGATIONS.values() for a in allowed})
    if agg is not None and agg not in known:
        raise HTTPError(400, f"'agg' must be one of {', '.join(known)}")
    filters: dict[str, str] = {}
    for raw in handler.get_arguments("filter"):
        if not raw.strip():
            continue  # the page's empty filter field
        key, sep, value = raw.partition("=")
        if not sep or not key.strip():
            raise HTTPError(400, "'filter' must be key=value (one attribute; repeat "
                                 "'filter' for more)")
        filters[key.strip()] = value.strip()
    if len(filters) > MAX_FILTERS:
        raise HTTPError(400, f"at most {MAX_FILTERS} 'filter' parameters")
    return mq.Query(name=name, start_ns=tr.start_ns, end_ns=tr.end_ns, step_s=step,
                    aggregation=agg, kind=kind, service=handler.arg("service"),
                    filters=filters, group_by=handler.arg("group_by"),
                    max_groups=handler.int_arg("max_groups", 20, 1, MAX_GROUPS) or 20)


async def load_metric(handler: DashboardHandler, project_id: int, query: mq.Query
                      ) -> mq.MetricData:
    """The metric's data, or a 404 when there is no such metric (of that kind) and a
    400 when the aggregation does not fit its kind."""
    try:
        data = await handler.run(mq.metric_data, handler.store, project_id, query)
    except ValueError as exc:
        raise HTTPError(400, str(exc)) from exc
    if data is None:
        kind = f" of kind {query.kind}" if query.kind else ""
        raise HTTPError(404, f"no metric named {query.name!r}{kind} in this project")
    return data


class ApiHandler(DashboardHandler):
    api = True


class ProjectsApi(ApiHandler):
    async def get(self) -> None:
        self.write_json({"projects": [asdict(p) for p in await self.list_projects()]})


class ErrorGroupsApi(ApiHandler):
    """The groups, filtered by status, by `type` and by `environment`, `release`,
    `service`; with the filters applied and every value each can take (`labels`)."""

    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        issue_type = issue_type_arg(self.arg("type"))
        view = await self.run(
            views.error_list_view, self.store, project.id, statuses_arg(self.arg("status")),
            sort_arg(self.arg("sort")), self.int_arg("limit", 50, 1, MAX_LIMIT) or 50,
            self.int_arg("offset", 0) or 0, self.now_us, facet_filters(self),
            search_arg(self), issue_type)
        self.write_json({**asdict(view.page), "filters": view.filters, "q": view.search,
                         "type": issue_type,
                         "facts": {fp: asdict(f) for fp, f in view.facts.items()},
                         "culprits": view.culprits,
                         "labels": asdict(view.labels)})


class ErrorGroupApi(ApiHandler):
    async def get(self, project_name: str, group_id: str) -> None:
        group = self.row_id(group_id, "error group")
        project = await self.load_project(project_name)
        view = await self.run(views.group_view, self.store, project.id, group,
                              self.time_range("7d"), self.id_arg("event", "occurrence"))
        if view is None:
            raise HTTPError(404, f"no error group {group_id} (or no such occurrence) in "
                                 f"project {project.name!r}")
        self.write_json(asdict(view))


@dataclass(frozen=True)
class StatusChange:
    """A status change's JSON body, read and checked (ErrorGroupStatusApi and the bulk
    route, dashboard/api_bulk.py)."""

    body: dict[str, Any]
    status: str
    next_release: bool
    snooze: Snooze | None


def status_change(handler: DashboardHandler) -> StatusChange:
    body = handler.json_body('{"status": "resolved"}')
    status = body.get("status") if isinstance(body, dict) else None
    if not isinstance(status, str) or status not in eq.STATUSES:
        raise HTTPError(400, f"status must be one of {', '.join(eq.STATUSES)}")
    next_release = body.get("next_release", False)
    if not isinstance(next_release, bool):
        raise HTTPError(400, "next_release must be true or false")
    snooze = snooze_json(body.get("snooze"), handler.now_us)
    if snooze is not None and status != "ignored":
        raise HTTPError(400, "only an ignored group can be snoozed (status: ignored)")
    return StatusChange(body, status, next_release, snooze)


class ErrorGroupStatusApi(ApiHandler):
    """POST {"status": "open" | "resolved" | "ignored"}, with "next_release": true to
    resolve in the next release, or "snooze" to ignore until then."""

    async def post(self, project_name: str, group_id: str) -> None:
        group = self.row_id(group_id, "error group")
        project = await self.load_project(project_name)
        change = status_change(self)
        self.require_role("member")
        updated = await self.run(views.change_status, self.store, project.id, group,
                                 change.status, self.actor(), change.next_release,
                                 change.snooze)
        if updated is None:
            raise HTTPError(404, f"no error group {group_id} in project {project.name!r}")
        self.write_json(asdict(updated))


class DeploysApi(ApiHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        window = self.arg("window") or views.DEFAULT_WINDOW
        if window not in views.WINDOWS:
            raise HTTPError(400, f"window must be one of {', '.join(views.WINDOWS)}")
        env = self.get_argument("env", None)
        view = await self.run(views.deploys_view, self.store, project.id,
                              self.time_range("7d"), env or None, env is None, window,
                              self.now_us)
        self.write_json(asdict(view))


class PerformanceApi(ApiHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        view = await self.run(views.performance_view, self.store, project.id,
                              self.time_range(), self.get_argument("service", None),
                              self.get_argument("env", None), self.arg("method"),
                              self.arg("route"))
        self.write_json(asdict(view))


class TracesApi(ApiHandler):
    """Matching traces, newest first, `limit` from `offset`, with the total
    (dashboard/traceargs.py)."""

    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        args = trace_args(self)
        view = await self.run(views.trace_search_view, self.store, project.id,
                              self.time_range(), args.service, args.name, args.min_ms,
                              args.status, args.terms,
                              self.int_arg("limit", 50, 1, TRACE_LIMIT) or 50,
                              self.int_arg("offset", 0, 0, MAX_OFFSET) or 0)
        self.write_json(asdict(view))


class TraceApi(ApiHandler):
    async def get(self, project_name: str, trace_id: str) -> None:
        project = await self.load_project(project_name)
        view = await self.run(views.trace_view, self.store, project.id, trace_id.lower())
        if view is None:
            raise HTTPError(404, f"no trace {trace_id} in project {project.name!r}")
        self.write_json(asdict(view))


class LogsApi(ApiHandler):
    """The filtered records, newest first with the total (dashboard/logargs.py), paged
    by `limit` and `offset`; with `after`, what follows the cursor, oldest first."""

    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        _tr, f = log_filter(self)
        page = await self.run(lq.search, self.store, project.id, f,
                              self.int_arg("limit", 50, 1, MAX_LIMIT) or 50,
                              self.int_arg("offset", 0) or 0)
        self.write_json(asdict(page))


class LogRecordApi(ApiHandler):
    async def get(self, project_name: str, record_id: str) -> None:
        project = await self.load_project(project_name)
        item = await self.run(lq.get, self.store, project.id, record_id.lower())
        if item is None:
            raise HTTPError(404, f"no log record {record_id} in project {project.name!r}")
        self.write_json(item)


class MetricsApi(ApiHandler):
    """The project's metric names (or one service's)."""

    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        metrics = await self.run(mq.list_metrics, self.store, project.id, self.arg("service"))
        self.write_json({"metrics": [asdict(m) for m in metrics]})


class MetricApi(ApiHandler):
    """One metric's lines over a time range (storage/queries/metric_series.py)."""

    async def get(self, project_name: str, name: str) -> None:
        project = await self.load_project(project_name)
        tr = self.time_range()
        data = await load_metric(self, project.id, metric_query(self, name, tr))
        self.write_json({**asdict(data), "range": tr.params()})
