"""The dashboard benchmark (bench/dashboard_http.py) times every page and read-API
route a GET reaches: a route added without a case fails here, not in a slow page."""

from __future__ import annotations

import re
from typing import Any

from tornado.web import RequestHandler

from bench import dashboard_http
from dashboard.app import Dashboard

# GET routes that are no page to time: the login form, static files, the trace-id
# box's redirect (it answers from the URL alone), the project-less setup page and the
# single sign-on redirects (to and from an identity provider: tests/dashboard/test_sso.py)
# and the upload options of the source map tools.
UNTIMED = {r"/login", r"/static/(.*)", r"/projects/([^/]+)/traces/lookup", r"/setup",
           r"/login/oidc/([a-z0-9][a-z0-9_-]*)", r"/login/oidc/([a-z0-9][a-z0-9_-]*)/callback",
           # sentry-cli's upload options (dashboard/release_api.py): a constant answer.
           r"/api/0/organizations/([^/]+)/chunk-upload/?"}


class _Store:
    """Dashboard() only keeps the store: the routes are read, nothing is served."""


def test_every_get_route_has_a_case() -> None:
    routes: list[Any] = Dashboard(_Store(), {}).routes()  # type: ignore[arg-type]
    gets = [pattern for pattern, handler, *_ in routes
            if handler.get is not RequestHandler.get and pattern not in UNTIMED]
    meta = {"end_us": 1_795_503_599_999_999, "trace_id": "ab" * 16}
    paths = [path.split("?", 1)[0] for _, _, path in dashboard_http.urls(meta, 7, "cd" * 16)]
    missing = [p for p in gets if not any(re.fullmatch(p, path) for path in paths)]
    assert missing == []
    assert len(gets) >= 20
