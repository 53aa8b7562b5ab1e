"""The dashboard's pages: server-rendered Tornado templates (autoescaped), with
charts drawn by dashboard/static/app.js from the read API or from data attributes."""

from __future__ import annotations

from dataclasses import asdict
from urllib.parse import quote, urlencode

from tornado.web import HTTPError

from dashboard import occurrence, views
from dashboard.api import facet_filters, load_metric, metric_query, sort_arg
from dashboard.auth import LOGIN_COOKIE, SESSION_COOKIE
from dashboard.base import DashboardHandler
from dashboard.logargs import log_filter
from storage.queries import errors as eq
from storage.queries import metrics as mq
from storage.queries import projects as pq

PAGE_SIZE = 50


# What a Location header may carry of a path as it is: the rest is percent-encoded.
_PATH_SAFE = "/?&=%#:@!$'()*+,;~-._[]"


def _safe_next(target: str | None) -> str:
    """Only a path on this site: it starts with one "/" (not "//" or "/\\", which
    browsers read as another host), holds no backslash and no control character (CR
    and LF would split the Location header, a TAB is dropped by browsers, turning
    "/<TAB>/host" into "//host"). Anything else goes to "/". Non-ASCII characters are
    percent-encoded: a header carries Latin-1 at most."""
    if not target or not target.startswith("/") or target.startswith("//") \
            or "\\" in target or any(ord(c) < 0x20 or ord(c) == 0x7F for c in target):
        return "/"
    return quote(target, safe=_PATH_SAFE)


class LoginPage(DashboardHandler):
    login_required = False

    def get(self) -> None:
        self.render("login.html", next=_safe_next(self.get_argument("next", None)),
                    problem=None)

    async def post(self) -> None:
        target = _safe_next(self.get_argument("next", None))
        # Login is forgery-protected too: nobody else's page may log you in (as them).
        try:
            self.check_xsrf_cookie()
        except HTTPError:
            self.set_status(403)
            self.render("login.html", next=target,
                        problem="This form expired or was not sent from this page. "
                                "Try again.")
            return
        token = self.get_argument("token", "").strip()
        if not token or not await self.dash.auth.token_matches(token):
            self.set_status(401)
            self.render("login.html", next=target, problem="That token is not valid.")
            return
        self.set_private_cookie(SESSION_COOKIE, await self.dash.auth.new_session(),
                                expires_days=self.dash.auth.session_days)
        self.clear_cookie(LOGIN_COOKIE, path="/login")
        self.redirect(target, status=303)


class LogoutPage(DashboardHandler):
    async def post(self) -> None:
        if self.session_token is not None:
            await self.dash.auth.end_session(self.session_token)
        self.clear_cookie(SESSION_COOKIE, path="/")
        self.redirect("/login", status=303)


class HomePage(DashboardHandler):
    async def get(self) -> None:
        self.projects = await self.run(pq.list_projects, self.store)
        if not self.projects:
            self.render("empty.html")
            return
        self.redirect(self.project_url("errors", self.projects[0].name))


class ErrorsPage(DashboardHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        status = self.arg("status") or "open"
        if status not in eq.STATUSES:
            raise HTTPError(400, f"status must be one of {', '.join(eq.STATUSES)}")
        sort = sort_arg(self.arg("sort"))
        page = self.int_arg("page", 1, 1, 100_000) or 1
        view = await self.run(views.error_list_view, self.store, project.id, [status], sort,
                              PAGE_SIZE, (page - 1) * PAGE_SIZE, self.now_us,
                              facet_filters(self))
        self.render("errors.html", view=view, listing=view.page, status=status, sort=sort,
                    page=page, page_size=PAGE_SIZE, section="errors")


class GroupPage(DashboardHandler):
    async def get(self, project_name: str, group_id: str) -> None:
        group = self.row_id(group_id, "error group")
        project = await self.load_project(project_name)
        tr = self.time_range("7d")
        view = await self.run(views.group_view, self.store, project.id, group, tr,
                              self.id_arg("event", "occurrence"))
        if view is None:
            raise HTTPError(404, f"no error group {group_id} (or no such occurrence) here")
        chart = {"series": {"t": [t for t, _ in view.trend],
                            "count": [c for _, c in view.trend]},
                 "deploys": [asdict(d) for d in view.deploys]}
        event = view.event
        self.render("group.html", view=view, tr=tr, chart=chart, section="errors",
                    chain=occurrence.chain(event.exceptions if event else None),
                    ctx=occurrence.context_of(event.context if event else None))


class GroupStatusPage(DashboardHandler):
    """The Resolve / Ignore / Reopen buttons: a form POST, then back to the group."""

    async def post(self, project_name: str, group_id: str) -> None:
        group = self.row_id(group_id, "error group")
        project = await self.load_project(project_name)
        status = self.get_argument("status", "")
        if status not in eq.STATUSES:
            raise HTTPError(400, f"status must be one of {', '.join(eq.STATUSES)}")
        updated = await self.run(views.change_status, self.store, project.id, group, status)
        if updated is None:
            raise HTTPError(404, f"no error group {group_id} here")
        self.redirect(self.project_url(f"errors/{updated.id}"), status=303)


class PerformancePage(DashboardHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        tr = self.time_range()
        service = self.get_argument("service", None)
        env = self.get_argument("env", None)
        view = await self.run(views.performance_view, self.store, project.id, tr, service,
                              env, self.arg("method"), self.arg("route"))
        params = {**tr.params(), "service": view.service, "env": view.env,
                  "method": view.method, "route": view.route}
        api = f"/api/v1/projects/{quote(project.name, safe='')}/performance?" + urlencode(
            {k: v for k, v in params.items() if v is not None})
        self.render("performance.html", view=view, tr=tr, api=api, section="performance")


class DeploysPage(DashboardHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        tr = self.time_range("7d")
        window = self.arg("window") or views.DEFAULT_WINDOW
        if window not in views.WINDOWS:
            raise HTTPError(400, f"window must be one of {', '.join(views.WINDOWS)}")
        env = self.get_argument("env", None)
        view = await self.run(views.deploys_view, self.store, project.id, tr, env or None,
                              env is None, window, self.now_us)
        chart = {"series": asdict(view.series),
                 "deploys": [asdict(c.deploy) for c in view.deploys]}
        self.render("deploys.html", view=view, tr=tr, chart=chart, env_arg=env,
                    section="deploys")


class TracesPage(DashboardHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        tr = self.time_range("1h")
        status = self.arg("status")
        if status is not None and status not in ("ok", "error", "unset"):
            raise HTTPError(400, "status must be one of ok, error, unset")
        form = {"service": self.arg("service"), "name": self.arg("name"),
                "min_ms": self.float_arg("min_ms"), "status": status}
        view = await self.run(views.trace_search_view, self.store, project.id, tr,
                              form["service"], form["name"], form["min_ms"], status)
        self.render("traces.html", view=view, tr=tr, form=form, section="traces")


class TracePage(DashboardHandler):
    async def get(self, project_name: str, trace_id: str) -> None:
        project = await self.load_project(project_name)
        view = await self.run(views.trace_view, self.store, project.id, trace_id.lower())
        if view is None:
            raise HTTPError(404, f"no trace {trace_id} in this project")
        self.render("trace.html", view=view, section="traces")


class LogsPage(DashboardHandler):
    """The filtered records, newest first, PAGE_SIZE a page; app.js follows new ones
    (the live tail) through the read API with the same filters and an `after` cursor."""

    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        tr, f = log_filter(self)
        if f.after is not None:
            raise HTTPError(400, "'after' is for the read API (the live tail)")
        page = self.int_arg("page", 1, 1, 100_000) or 1
        at = self.int_arg("at", None, 0, 2**63 - 1)  # a record's time to point at
        view = await self.run(views.logs_view, self.store, project.id, f, PAGE_SIZE,
                              (page - 1) * PAGE_SIZE)
        filters = [("service", f.service), ("severity", self.arg("severity")),
                   ("text", f.text), ("trace_id", f.trace_id),
                   *[("attr", f"{k}={v}") for k, v in f.attributes]]
        tail = f"/api/v1/projects/{quote(project.name, safe='')}/logs?" + urlencode(
            [(k, v) for k, v in filters if v is not None])
        self.render("logs.html", view=view, tr=tr, f=f, form=dict(filters[:4]),
                    attr_filters=[f"{k}={v}" for k, v in f.attributes], page=page,
                    page_size=PAGE_SIZE, at=at, tail=tail, section="logs")


class MetricsPage(DashboardHandler):
    """The metric names, and the one picked (`metric=`) charted with the read API's
    parameters; the chart draws from the same document the API answers."""

    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        tr = self.time_range()
        service = self.arg("service")
        metrics = await self.run(mq.list_metrics, self.store, project.id, service)
        name = self.arg("metric")
        data = None
        if name is not None:
            data = await load_metric(self, project.id, metric_query(self, name, tr))
        self.render("metrics.html", metrics=metrics, data=data, tr=tr, service=service,
                    chart={"series": asdict(data)} if data else None, section="metrics")
