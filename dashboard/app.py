"""The dashboard as the service mounts it: its shared secrets and its routes on the
HTTP receiver's server, beside /ingest (which never needs a login or an _xsrf)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tornado.web import HTTPError, StaticFileHandler

from dashboard import (
    alerts,
    api,
    api_bulk,
    audit,
    crons,
    feedback,
    merging,
    pages,
    policy,
    release_api,
    releases,
    servicemap,
    setup,
    sso,
    stats,
    tokens,
    users,
)
from dashboard.auth import AdminAuth
from dashboard.base import DashboardContext
from storage.store import Store

STATIC = Path(__file__).parent / "static"
# A project name or a fingerprint may hold any character but "/" (sent as %2F);
# Tornado percent-decodes the captured groups.
P = r"/projects/([^/]+)"
API = r"/api/v1/projects/([^/]+)"
# The only paths /static/ serves: the directory's files, by name.
STATIC_FILES = frozenset(p.name for p in STATIC.iterdir() if p.is_file())


class StaticFiles(StaticFileHandler):
    """The dashboard's static files. Any other name is a 404 before it reaches the
    filesystem: a NUL byte or a name too long for it would otherwise be a 500, and
    a path leaving the directory a 403 that confirms where it pointed."""

    def decode_argument(self, value: bytes, name: str | None = None) -> str:
        return value.decode("utf-8", errors="replace")  # %ff is a name like any other

    async def get(self, path: str, include_body: bool = True) -> None:
        if path not in STATIC_FILES:
            raise HTTPError(404)
        await super().get(path, include_body)


class Dashboard:
    def __init__(self, store: Store, settings: dict[str, Any]) -> None:
        self.context = DashboardContext(store, AdminAuth(store, settings), settings)

    def prepare(self) -> str | None:
        """Blocking: load or create the shared secrets. Returns an admin token that
        this call generated (print it once), or None."""
        return self.context.auth.prepare()

    def routes(self) -> list[Any]:
        args = {"dash": self.context}
        return [
            (r"/", pages.HomePage, args),
            (r"/login", pages.LoginPage, args),
            (r"/logout", pages.LogoutPage, args),
            *sso.routes(args),
            (r"/static/(.*)", StaticFiles, {"path": str(STATIC)}),
            (P + r"/errors", pages.ErrorsPage, args),
            (P + r"/errors/bulk-status", pages.BulkStatusPage, args),
            (P + r"/errors/([0-9]+)", pages.GroupPage, args),
            (P + r"/errors/([0-9]+)/status", pages.GroupStatusPage, args),
            (P + r"/performance", pages.PerformancePage, args),
            (P + r"/deploys", pages.DeploysPage, args),
            (P + r"/releases", releases.ReleasesPage, args),
            (P + r"/releases/(.+)", releases.ReleasePage, args),
            (P + r"/feedback", feedback.FeedbackPage, args),
            (P + r"/traces", pages.TracesPage, args),
            (P + r"/traces/lookup", pages.TraceLookupPage, args),
            (P + r"/traces/([0-9a-fA-F]{1,32})", pages.TracePage, args),
            (P + r"/logs", pages.LogsPage, args),
            (P + r"/metrics", pages.MetricsPage, args),
            (P + r"/setup", setup.SetupPage, args),
            (P + r"/policy", policy.PolicyPage, args),
            (r"/setup", setup.SetupPage, args),
            *alerts.routes(P, args),
            *merging.routes(P, API, args),
            *crons.routes(P, API, args),
            *stats.routes(P, API, args),
            *servicemap.routes(P, API, args),
            *users.routes(args),
            *tokens.routes(args),
            *audit.routes(args),
            *release_api.routes(args),
            (r"/api/v1/projects", api.ProjectsApi, args),
            (API + r"/error-groups", api.ErrorGroupsApi, args),
            (API + r"/error-groups/bulk-status", api_bulk.ErrorGroupsBulkStatusApi, args),
            (API + r"/error-groups/([0-9]+)", api.ErrorGroupApi, args),
            (API + r"/error-groups/([0-9]+)/status", api.ErrorGroupStatusApi, args),
            (API + r"/policy", policy.PolicyApi, args),
            (API + r"/deploys", api.DeploysApi, args),
            (API + r"/releases", releases.ReleasesApi, args),
            (API + r"/releases/(.+)", releases.ReleaseApi, args),
            (API + r"/feedback", feedback.FeedbackApi, args),
            (API + r"/performance", api.PerformanceApi, args),
            (API + r"/traces", api.TracesApi, args),
            (API + r"/traces/([0-9a-fA-F]{1,32})", api.TraceApi, args),
            (API + r"/logs", api.LogsApi, args),
            (API + r"/logs/([0-9a-fA-F]{32})", api.LogRecordApi, args),
            (API + r"/metrics", api.MetricsApi, args),
            # OpenTelemetry instrument names may hold "/": the rest of the path is the name.
            (API + r"/metrics/(.+)", api.MetricApi, args),
        ]
