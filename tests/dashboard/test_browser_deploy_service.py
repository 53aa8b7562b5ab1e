"""A deploy naming its service in a real browser (Debian's Chromium driven by
Playwright) and in the read API, on data sent through the real ingest endpoints:
the page shows the service and compares that service's requests only."""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, XSS, iso, post_ok, post_requests, requests_between
from tests.support.server import Server

pytestmark = pytest.mark.browser
ENV = "svc-page"  # the session's shared collector: an environment of this test alone


def test_the_deploys_page_shows_the_service_and_blames_only_it(page: Any,
                                                               browser_server: Server) -> None:
    now = time.time()
    deploy_at = (now - 3600) // 60 * 60  # on a minute: no rollup minute mixes both sides
    items = requests_between(now - 7200, deploy_at, 10, 50.0, service="web", env=ENV)
    items += requests_between(deploy_at, now - 120, 10, 200.0, service="web", env=ENV)
    items += requests_between(now - 7200, now - 120, 10, 80.0, service="api", env=ENV)
    post_requests(browser_server, items)
    for sha, service in (("feed0000web", "web"), ("feed0000api", "api"),
                         ("feed0000xss", XSS)):
        post_ok(browser_server, "/ingest/deploys", {"git_sha": sha, "env": ENV,
                                                 "service": service,
                                                 "timestamp": iso(deploy_at)})
    # The range named: the default follows the newest data of the shared collector.
    page.goto(browser_server.base + f"/projects/acme/deploys?env={ENV}&range=24h")
    web = page.locator("section.deploy[data-sha='feed0000web']")
    api = page.locator("section.deploy[data-sha='feed0000api']")
    assert web.locator(".badge.service").inner_text() == "web"
    assert "worse" in (web.get_attribute("class") or "")
    assert f"requests from service web in {ENV}" in web.locator(".window-note").inner_text()
    assert api.locator(".badge.service").inner_text() == "api"
    assert "worse" not in (api.get_attribute("class") or "")
    # The markup escapes a service's name: shown as text, nothing run.
    shown = page.locator("section.deploy[data-sha='feed0000xss'] .badge.service")
    assert shown.inner_text() == XSS
    # api's graphs mark api's deploy, not web's; the tip names the service.
    page.goto(browser_server.base + f"/projects/acme/performance?service=api&env={ENV}&range=24h")
    marker = page.locator("#chart-latency .deploy-marker[data-sha='feed0000api']")
    marker.wait_for()
    assert page.locator(".deploy-marker[data-sha='feed0000web']").count() == 0
    marker.hover()
    page.locator(".deploy-tip").wait_for()
    assert "service api" in page.locator(".deploy-tip").inner_text()
    listed = requests.get(browser_server.base + "/api/v1/projects/acme/deploys",
                          params={"env": ENV}, timeout=30,
                          headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).json()
    found = {c["deploy"]["git_sha"]: c for c in listed["deploys"]}
    assert (found["feed0000web"]["deploy"]["service"], found["feed0000web"]["worse"]) == (
        "web", True)
    assert (found["feed0000api"]["deploy"]["service"], found["feed0000api"]["worse"]) == (
        "api", False)
    assert found["feed0000api"]["scope"] == f"service api in {ENV}"
