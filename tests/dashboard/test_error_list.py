"""The error list's filters (environment, release, service; dropdowns of the
project's values, kept in the URL with status and sort) and its rows' chips; and
the Deploys page's groups first seen in a deploy's release. HTML from the real
server, on SQLite and PostgreSQL."""

from __future__ import annotations

import html
import re

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, XSS, error, post_ok
from tests.support.server import Projects, Server


@pytest.fixture
def listing(dash_projects: Projects) -> Server:
    """The module's collector, as a project of this test's own sees it."""
    server = dash_projects.take()
    post_ok(server, "/ingest/errors/batch", {"errors": [
        error("checkout", exception_class="CheckoutError", timestamp="2026-11-20T10:00:00Z",
              environment="prod", release="1.0", service="web"),
        error("checkout", exception_class="CheckoutError", timestamp="2026-11-20T11:00:00Z",
              environment="staging", release="1.1", service="web"),
        error("report", exception_class="ReportError", timestamp="2026-11-20T12:30:00Z",
              environment="staging", release="1.1", service="worker"),
        error("hostile", exception_class="HostileError", timestamp="2026-11-20T12:40:00Z",
              environment=XSS, release="1.1", tags={"x": XSS})]})
    return server


def page(server: Server, path: str, **params: str) -> str:
    response = requests.get(server.project_url(path), params=params, timeout=10,
                            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status_code == 200, response.text
    return response.text


def classes(text: str) -> list[str]:
    return re.findall(r'<span class="exception-class">([^<]+)</span>', text)


def options(text: str, name: str) -> list[tuple[str, bool]]:
    select = text[text.index(f'<select name="{name}"'):]
    select = select[:select.index("</select>")]
    return [(html.unescape(v), bool(s)) for v, s in
            re.findall(r'<option value="([^"]*)"( selected)?>', select)]


def test_the_filters_narrow_the_list_and_offer_the_projects_values(listing: Server) -> None:
    everything = page(listing, "/errors")
    assert sorted(classes(everything)) == ["CheckoutError", "HostileError", "ReportError"]
    assert options(everything, "environment") == [("", False), (XSS, False), ("prod", False),
                                                  ("staging", False)]
    assert options(everything, "release") == [("", False), ("1.0", False), ("1.1", False)]
    assert options(everything, "service") == [("", False), ("web", False), ("worker", False)]
    staging = page(listing, "/errors", environment="staging", service="worker")
    assert classes(staging) == ["ReportError"]
    assert ("staging", True) in options(staging, "environment")
    assert ("worker", True) in options(staging, "service")
    assert classes(page(listing, "/errors", release="1.0")) == ["CheckoutError"]
    assert "No open error groups with these filters" in page(listing, "/errors",
                                                             release="1.0", service="worker")


def test_status_sort_and_pages_keep_the_filters(listing: Server) -> None:
    text = page(listing, "/errors", environment="staging", sort="count")
    tabs = re.findall(r'<a href="([^"]+)" class="tab status-', text)
    assert tabs and all("environment=staging" in html.unescape(t) for t in tabs)
    sorts = re.findall(r'<a href="([^"]+)" class="sort-', text)
    assert sorts and all("environment=staging" in html.unescape(s) for s in sorts)
    form = text[text.index('<form method="get" class="filters"'):]
    assert '<input type="hidden" name="sort" value="count">' in form


def test_rows_show_their_environments_and_latest_release(listing: Server) -> None:
    text = page(listing, "/errors")
    row = text[text.index('CheckoutError'):]
    row = row[:row.index("</tr>")]
    assert re.findall(r'class="badge env-chip">([^<]+)<', row) == ["staging", "prod"]
    assert re.findall(r'class="badge release-chip"[^>]*>([^<]+)<', row) == ["1.1"]
    # Filtered by environment, the environment chips say nothing new.
    filtered = page(listing, "/errors", environment="staging")
    assert "env-chip" not in filtered and "release-chip" in filtered


def test_client_strings_in_filters_and_chips_are_escaped(listing: Server) -> None:
    for text in (page(listing, "/errors"), page(listing, "/errors", environment=XSS)):
        assert XSS not in text
        assert html.escape(XSS) in text


def test_a_deploy_lists_the_groups_first_seen_in_its_release(listing: Server) -> None:
    post_ok(listing, "/ingest/deploys", {"git_sha": "abc123", "version": "1.1",
                                         "timestamp": "2026-11-20T09:00:00Z"})
    post_ok(listing, "/ingest/deploys", {"git_sha": "def456",
                                         "timestamp": "2026-11-20T09:30:00Z"})
    text = page(listing, "/deploys", range="custom", **{"from": "2026-11-20T00:00",
                                                        "to": "2026-11-21T00:00"})
    with_version = text[text.index('data-sha="abc123"'):]
    with_version = with_version[:with_version.index("</section>")]
    assert 'first seen in release <code class="release">1.1</code>' in with_version
    release_list = with_version[with_version.index('class="new-groups release-groups"'):]
    assert sorted(classes(release_list)) == ["HostileError", "ReportError"]
    assert re.search(rf'href="/projects/{listing.project}/errors/\d+">'
                     r'<span class="exception-class">ReportError', release_list)
    without = text[text.index('data-sha="def456"'):]
    assert "first seen in release" not in without[:without.index("</section>")]
