"""The range a page opens with when its URL names none (BaseHandler.page_range): the
smallest preset holding the project's newest data, else the user's last preset (a
cookie), and the URL over both; through a real server, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
import time

import pytest
import requests

from dashboard.timerange import COOKIE
from tests.dashboard.data import error, iso, post_ok
from tests.dashboard.test_setup import logged_in
from tests.support.server import Projects, Server

CURRENT = re.compile(r'class="range-preset current">([^<]+)</a>')
REPLACE = re.compile(r'data-replace-url="([^"]+)"')


@pytest.fixture
def dash(dash_projects: Projects) -> Server:
    """The module's collector, as a project of this test's own sees it."""
    return dash_projects.take()


def shown(session: requests.Session, server: Server, path: str) -> tuple[str, str | None]:
    """(the preset marked current, the URL the page puts in the address bar)."""
    response = session.get(server.base + path, timeout=10)
    assert response.status_code == 200, response.text
    current = CURRENT.search(response.text)
    assert current is not None, response.text
    replace = REPLACE.search(response.text)
    return current.group(1), replace.group(1).replace("&amp;", "&") if replace else None


def group_id(server: Server) -> int:
    return int(server.project_rows("error_groups", "id", order_by="id")[0][0])


def test_fresh_data_opens_on_the_last_hour_and_puts_it_in_the_url(dash: Server) -> None:
    home = f"/projects/{dash.project}"
    post_ok(dash, "/ingest/errors", error("fresh", timestamp=iso(time.time() - 40 * 60)))
    session = logged_in(dash)
    group = group_id(dash)
    for path in (f"{home}/errors/{group}", f"{home}/performance",
                 f"{home}/deploys"):
        label, url = shown(session, dash, path)
        assert label == "Last hour", path
        assert url == path + "?range=1h"
    assert COOKIE not in session.cookies  # nothing chosen by the user yet


def test_older_data_opens_on_the_preset_that_holds_it(dash: Server) -> None:
    home = f"/projects/{dash.project}"
    post_ok(dash, "/ingest/errors", error("old", timestamp=iso(time.time() - 3 * 86_400)))
    label, url = shown(logged_in(dash), dash, f"{home}/performance?service=shop")
    assert label == "7 days" and url == f"{home}/performance?service=shop&range=7d"


def test_no_data_keeps_each_page_default(dash: Server) -> None:
    home = f"/projects/{dash.project}"
    session = logged_in(dash)
    assert shown(session, dash, f"{home}/performance")[0] == "24 hours"
    assert shown(session, dash, f"{home}/deploys")[0] == "7 days"


def test_the_last_choice_is_remembered_and_the_url_wins(dash: Server) -> None:
    home = f"/projects/{dash.project}"
    post_ok(dash, "/ingest/errors", error("chosen", timestamp=iso(time.time() - 60)))
    session = logged_in(dash)
    assert shown(session, dash, f"{home}/performance?range=30d") == ("30 days", None)
    assert session.cookies.get(COOKIE) == "30d"
    group = group_id(dash)
    label, url = shown(session, dash, f"{home}/errors/{group}")
    assert label == "30 days" and url == f"{home}/errors/{group}?range=30d"
    # The URL wins over the cookie, and a new choice replaces the remembered one.
    assert shown(session, dash, f"{home}/deploys?range=24h")[0] == "24 hours"
    assert shown(session, dash, f"{home}/deploys")[0] == "24 hours"
    # A custom range is shown but not remembered; a forged cookie is ignored.
    custom = f"{home}/deploys?range=custom&from=2026-11-01T00:00&to=2026-11-02T00:00"
    assert session.get(dash.base + custom, timeout=10).status_code == 200
    assert session.cookies.get(COOKIE) == "24h"
    session.cookies.set(COOKIE, "<b>forever</b>")
    assert shown(session, dash, f"{home}/deploys")[0] == "Last hour"
