"""The dashboard's pages: server-rendered Tornado templates (autoescaped), with
charts drawn by dashboard/static/app.js from the read API or from data attributes."""

from __future__ import annotations

from dataclasses import asdict
from urllib.parse import quote, urlencode

from tornado.web import HTTPError

from dashboard import occurrence, onboarding, trace_parts, views
from dashboard.api import (
    facet_filters,
    issue_type_arg,
    load_metric,
    metric_query,
    search_arg,
    sort_arg,
)
from dashboard.auth import LOGIN_COOKIE, SESSION_COOKIE
from dashboard.base import DashboardHandler
from dashboard.logargs import log_filter
from dashboard.scatter import scatter
from dashboard.snooze_args import bulk_snooze, snooze_form
from dashboard.traceargs import MAX_OFFSET, trace_args
from dashboard.traceargs import PAGE_SIZE as TRACE_PAGE
from storage.groups import status as group_status
from storage.queries import errors as eq
from storage.queries import metric_series as mq
from storage.queries.newest import newest_us

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


def render_login(handler: DashboardHandler, target: str, problem: str | None = None,
                 email: str = "", status: int = 200) -> None:
    """The login page: a button per OpenID provider, the password form (unless
    `dashboard.sso_only`) and the admin token's form, with `problem` shown."""
    handler.set_status(status)
    handler.render("login.html", next=target, problem=problem, email=email,
                   providers=list(handler.dash.providers.values()),
                   sso_only=handler.dash.sso_only, sso_query=urlencode({"next": target}))


class LoginPage(DashboardHandler):
    """Email and password of a team account, or the admin token. Failures are
    throttled per email and per client address (storage/accounts/login_throttle.py): past
    the limit, a 429 with Retry-After, whether or not the password is right. With
    `dashboard.sso_only`, a password is refused unread (403): accounts sign in through
    their identity provider (dashboard/sso.py), and the admin token stays as the
    break-glass login."""

    login_required = False

    def get(self) -> None:
        render_login(self, _safe_next(self.get_argument("next", None)))

    async def post(self) -> None:
        target = _safe_next(self.get_argument("next", None))
        email = self.get_argument("email", "").strip()
        # Login is forgery-protected too: nobody else's page may log you in (as them).
        try:
            self.check_xsrf_cookie()
        except HTTPError:
            render_login(self, target, "This form expired or was not sent from this page. "
                                       "Try again.", email, 403)
            return
        token = self.get_argument("token", "").strip()
        password = self.get_argument("password", "", strip=False)
        if self.dash.sso_only and (email or password):
            render_login(self, target, "Password login is turned off here: sign in with your "
                                       "identity provider.", email, 403)
            return
        auth = self.dash.auth
        client = self.request.remote_ip or "unknown"
        wait = await auth.retry_after(email, client)
        if wait:
            self.set_header("Retry-After", str(wait))
            render_login(self, target, f"Too many failed logins. Try again in {wait // 60 + 1} "
                                       "minutes.", email, 429)
            return
        user_id: int | None = None
        if email or password:
            login = await auth.check_password(email, password) if email and password else None
            ok, problem = login is not None, "That email and password do not match."
            user_id = login.user_id if login else None
        else:
            ok = bool(token) and await auth.token_matches(token)
            problem = "That token is not valid."
        if not ok:
            await auth.failed(email, client)
            render_login(self, target, problem, email, 401)
            return
        self.set_private_cookie(SESSION_COOKIE, await auth.new_session(user_id),
                                expires_days=auth.session_days)
        self.clear_cookie(LOGIN_COOKIE, path="/login")
        self.redirect(target, status=303)


class LogoutPage(DashboardHandler):
    """POST /logout: the session ends on every collector; one that logged in through
    an OpenID provider with an end_session_endpoint goes on to end its session
    there, which comes back to the login page. That last step is a page that moves
    on by itself (a `Refresh` header) rather than a redirect: a browser applies the
    form's page's CSP `form-action 'self'` to a redirect answering the form, and would
    stop at the provider's address."""

    write_role = "none"  # everyone may log out

    async def post(self) -> None:
        if self.session_token is not None:
            await self.dash.auth.end_session(self.session_token)
        self.clear_cookie(SESSION_COOKIE, path="/")
        provider = self.dash.providers.get(self.login.provider or "") if self.login else None
        back = f"{self.request.protocol}://{self.request.host}/login"
        end = None if provider is None or self.via_bearer \
            else await provider.end_session_url(back)
        if end is None:
            self.redirect("/login", status=303)
            return
        self.logged_in, self.login = False, None
        self.set_header("Refresh", f"0; url={end}")
        self.render("signout.html", url=end)


class HomePage(DashboardHandler):
    async def get(self) -> None:
        await self.list_projects()
        if not self.projects:
            self.render("empty.html", how=None)
            return
        self.redirect(self.project_url("errors", self.projects[0].name))


class ErrorsPage(DashboardHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        status = self.arg("status") or "open"
        if status not in eq.STATUSES:
            raise HTTPError(400, f"status must be one of {', '.join(eq.STATUSES)}")
        sort = sort_arg(self.arg("sort"))
        issue_type = issue_type_arg(self.arg("type"))
        page = self.int_arg("page", 1, 1, 100_000) or 1
        view = await self.run(views.error_list_view, self.store, project.id, [status], sort,
                              PAGE_SIZE, (page - 1) * PAGE_SIZE, self.now_us,
                              facet_filters(self), search_arg(self), issue_type)
        if not view.filters and not view.search and not any(view.page.by_status.values()) \
                and await self.run(newest_us, self.store, project.id) is None:
            key_id = await self.run(onboarding.project_key_id, self.store, project.name)
            self.render("empty.html", how=onboarding.onboarding(self, project, key_id),
                        section="errors")
            return
        self.render("errors.html", view=view, listing=view.page, status=status, sort=sort,
                    issue_type=issue_type, page=page, page_size=PAGE_SIZE, section="errors")


class GroupPage(DashboardHandler):
    async def get(self, project_name: str, group_id: str) -> None:
        group = self.row_id(group_id, "error group")
        project = await self.load_project(project_name)
        tr = await self.page_range("7d")
        view = await self.run(views.group_view, self.store, project.id, group, tr,
                              self.id_arg("event", "occurrence"))
        if view is None:
            raise HTTPError(404, f"no error group {group_id} (or no such occurrence) here")
        chart = {"series": {"t": [t for t, _ in view.trend],
                            "count": [c for _, c in view.trend]},
                 "deploys": [asdict(d) for d in view.deploys]}
        event = view.event
        chain = occurrence.chain(event.exceptions if event else None)
        # Without a structured chain, the text backtrace parsed into one; the raw text
        # stays one click away, as the language printed it.
        parsed = [] if chain or event is None else occurrence.text_chain(
            event.backtrace, event.source_context)
        self.render("group.html", view=view, tr=tr, chart=chart, section="errors",
                    chain=chain or parsed, raw_trace=event.backtrace if parsed and event else None,
                    ctx=occurrence.context_of(event.context if event else None))


def next_release_arg(handler: DashboardHandler) -> bool:
    """`next_release=1` with `status=resolved`: resolve in the next release."""
    raw = handler.get_argument("next_release", "")
    if raw not in ("", "0", "1"):
        raise HTTPError(400, "next_release must be 1 or 0")
    return raw == "1"


class GroupStatusPage(DashboardHandler):
    """The Resolve / Ignore / Reopen buttons: a form POST, then back to the group."""

    async def post(self, project_name: str, group_id: str) -> None:
        group = self.row_id(group_id, "error group")
        project = await self.load_project(project_name)
        status = self.get_argument("status", "")
        if status not in eq.STATUSES:
            raise HTTPError(400, f"status must be one of {', '.join(eq.STATUSES)}")
        self.require_role("member")
        snooze = snooze_form(self)
        if snooze is not None and status != "ignored":
            raise HTTPError(400, "only an ignored group can be snoozed (status=ignored)")
        updated = await self.run(views.change_status, self.store, project.id, group, status,
                                 self.actor(), next_release_arg(self), snooze)
        if updated is None:
            raise HTTPError(404, f"no error group {group_id} here")
        self.redirect(self.project_url(f"errors/{updated.id}"), status=303)


class BulkStatusPage(DashboardHandler):
    """The error list's bulk Resolve / Ignore / Reopen: the ticked groups' ids
    (`group`, repeated) and a `status`, in one form POST; then back to the list it
    came from (`back`, a path on this site). Its Snooze button (`action=snooze`)
    ignores them with the snooze's conditions (dashboard/snooze_args.py)."""

    async def post(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        snooze = bulk_snooze(self)
        status = "ignored" if snooze is not None else self.get_argument("status", "")
        if status not in eq.STATUSES:
            raise HTTPError(400, f"status must be one of {', '.join(eq.STATUSES)}")
        raw = self.get_arguments("group")
        if not raw:
            raise HTTPError(400, "tick at least one error group (no 'group' given)")
        if len(raw) > group_status.MAX_BULK:
            raise HTTPError(400, f"at most {group_status.MAX_BULK} groups at once")
        if not all(value.isascii() and value.isdigit() and len(value) <= 19 for value in raw):
            raise HTTPError(400, "each 'group' must be an error group's id (digits)")
        ids = [int(value) for value in raw]  # storage/groups/status.py drops those out of range
        self.require_role("member")
        await self.run(group_status.set_statuses, self.store, project.id, ids, status,
                       self.actor(), None, next_release_arg(self), snooze)
        back = self.get_argument("back", None)
        prefix = self.project_url("errors")
        target = _safe_next(back)
        self.redirect(target if target.startswith(prefix) else prefix, status=303)


class PerformancePage(DashboardHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        tr = await self.page_range("24h")
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
        tr = await self.page_range("7d")
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
        args = trace_args(self)
        page = self.int_arg("page", 1, 1, MAX_OFFSET // TRACE_PAGE) or 1
        view = await self.run(views.trace_search_view, self.store, project.id, tr,
                              args.service, args.name, args.min_ms, args.status, args.terms,
                              TRACE_PAGE, (page - 1) * TRACE_PAGE)
        self.render("traces.html", view=view, tr=tr, form=args.form(), page=page,
                    page_size=TRACE_PAGE, scatter=scatter(view.page.items, tr),
                    section="traces")


class TracePage(DashboardHandler):
    async def get(self, project_name: str, trace_id: str) -> None:
        project = await self.load_project(project_name)
        view = await self.run(views.trace_view, self.store, project.id, trace_id.lower())
        if view is None:
            raise HTTPError(404, f"no trace {trace_id} in this project")
        collapsed = trace_parts.span_ids_arg(self.arg("collapsed"))
        self.render("trace.html", view=view, section="traces", parts=trace_parts,
                    collapsed=collapsed, opened=(self.arg("span") or "").lower(),
                    highlighted=trace_parts.span_ids_arg(self.arg("highlight")),
                    hidden=trace_parts.hidden_spans(view.rows, collapsed),
                    colours=trace_parts.service_colours(view.rows))


class TraceLookupPage(DashboardHandler):
    """The header's trace-id box: a form cannot put its value in the path, so it
    comes here and is sent on to the trace's page (which says when it is unknown)."""

    async def get(self, project_name: str) -> None:
        await self.load_project(project_name)
        raw = (self.arg("id") or "").replace("-", "").lower()
        if not raw or len(raw) > 32 or any(c not in "0123456789abcdef" for c in raw):
            raise HTTPError(400, "'id' must be a trace id: up to 32 hexadecimal digits")
        self.redirect(self.project_url(f"traces/{raw.zfill(32)}"), status=303)


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
