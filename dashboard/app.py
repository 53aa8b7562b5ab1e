"""The dashboard as the service mounts it: its shared secrets and its routes on the
HTTP receiver's server, beside /ingest (which never needs a login or an _xsrf)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tornado.web import StaticFileHandler

from dashboard import api, pages
from dashboard.auth import AdminAuth
from dashboard.base import DashboardContext
from storage.store import Store

STATIC = Path(__file__).parent / "static"
# A project name or a fingerprint may hold any character but "/" (sent as %2F);
# Tornado percent-decodes the captured groups.
P = r"/projects/([^/]+)"
API = r"/api/v1/projects/([^/]+)"


class Dashboard:
    def __init__(self, store: Store, settings: dict[str, Any]) -> None:
        self.context = DashboardContext(store, AdminAuth(store, settings))

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
            (r"/static/(.*)", StaticFileHandler, {"path": str(STATIC)}),
            (P + r"/errors", pages.ErrorsPage, args),
            (P + r"/errors/([0-9]+)", pages.GroupPage, args),
            (P + r"/errors/([0-9]+)/status", pages.GroupStatusPage, args),
            (P + r"/performance", pages.PerformancePage, args),
            (P + r"/deploys", pages.DeploysPage, args),
            (P + r"/traces", pages.TracesPage, args),
            (P + r"/traces/([0-9a-fA-F]{1,32})", pages.TracePage, args),
            (r"/api/v1/projects", api.ProjectsApi, args),
            (API + r"/error-groups", api.ErrorGroupsApi, args),
            (API + r"/error-groups/([0-9]+)", api.ErrorGroupApi, args),
            (API + r"/error-groups/([0-9]+)/status", api.ErrorGroupStatusApi, args),
            (API + r"/deploys", api.DeploysApi, args),
            (API + r"/performance", api.PerformanceApi, args),
            (API + r"/traces", api.TracesApi, args),
            (API + r"/traces/([0-9a-fA-F]{1,32})", api.TraceApi, args),
        ]
