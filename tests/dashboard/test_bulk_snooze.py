"""Bulk snooze from the real server (SQLite and PostgreSQL): the error list's bulk form
(its Snooze button, action=snooze) and the API's bulk-status route snooze every ticked
group in one go, each change recorded with who made it; bad values are a 400 naming
the problem, with nothing changed."""

from __future__ import annotations

import html
import re
import time
from datetime import UTC, datetime

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, error, post_ok
from tests.dashboard.test_error_workflow import XSRF, listing, logged_in, rows
from tests.support.server import Projects, Server

BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
CLASSES = ["SnoozeA", "SnoozeB", "SnoozeC"]


@pytest.fixture
def server(dash_projects: Projects) -> Server:
    """The module's collector, as a project of this test's own sees it."""
    server = dash_projects.take()
    post_ok(server, "/ingest/errors/batch", {"errors": [
        error(cls.lower(), exception_class=cls) for cls in CLASSES]})
    return server


def local(ts_s: float) -> str:
    """As a datetime-local input sends it (the pages' times are UTC)."""
    return datetime.fromtimestamp(ts_s, tz=UTC).strftime("%Y-%m-%dT%H:%M")


def bulk(session: requests.Session, server: Server, ids: list[str],
         **fields: str) -> requests.Response:
    xsrf = XSRF.search(listing(session, server))
    assert xsrf is not None
    return session.post(server.project_url("/errors/bulk-status"), timeout=10,
                        allow_redirects=False, data={
                            "_xsrf": xsrf.group(1), "group": ids, "action": "snooze",
                            "back": f"/projects/{server.project}/errors?q=snooze", **fields})


def test_the_bulk_form_snoozes_every_ticked_group(server: Server) -> None:
    session = logged_in(server)
    text = listing(session, server)
    assert 'name="action" value="snooze" class="bulk-snooze-button"' in text
    ids = rows(text)
    done = bulk(session, server, [ids["SnoozeA"], ids["SnoozeB"]], snooze_events="2",
                snooze_hours="", snooze_until="", snooze_per_hour="100")
    assert done.status_code == 303, done.text
    assert done.headers["Location"] == f"/projects/{server.project}/errors?q=snooze"
    assert list(rows(listing(session, server))) == ["SnoozeC"]
    ignored = listing(session, server, status="ignored")
    assert sorted(rows(ignored)) == ["SnoozeA", "SnoozeB"]
    assert ignored.count('snoozed until 3 events in all, or more than 100 in an hour<') == 2
    for cls in ("SnoozeA", "SnoozeB"):
        page = session.get(server.project_url(f"/errors/{ids[cls]}"), timeout=10).text
        assert 'class="snoozed">3 events in all, or more than 100 in an hour<' in page
        assert '<span class="actor">admin token</span>' in page
    # Two more events of A end its snooze; B stays snoozed.
    for _ in range(2):
        post_ok(server, "/ingest/errors", error("snoozea", exception_class="SnoozeA"))
    assert sorted(rows(listing(session, server))) == ["SnoozeA", "SnoozeC"]
    assert list(rows(listing(session, server, status="ignored"))) == ["SnoozeB"]


def test_a_time_ahead_and_a_duration(server: Server) -> None:
    session = logged_in(server)
    ids = rows(listing(session, server))
    ahead = int(time.time()) // 60 * 60 + 2 * 86_400
    assert bulk(session, server, [ids["SnoozeA"]],
                snooze_until=local(ahead)).status_code == 303
    before = time.time()
    assert bulk(session, server, [ids["SnoozeB"]], snooze_hours="1").status_code == 303
    after = time.time()
    api = server.project_api("/error-groups")
    a = requests.get(f"{api}/{ids['SnoozeA']}", headers=BEARER, timeout=10).json()["group"]
    b = requests.get(f"{api}/{ids['SnoozeB']}", headers=BEARER, timeout=10).json()["group"]
    assert a["snooze_until_us"] == ahead * 1_000_000
    assert (before + 3600) * 1e6 - 1e6 <= b["snooze_until_us"] <= (after + 3600) * 1e6 + 1e6
    assert b["status"] == "ignored" and b["snooze_count"] is None


@pytest.mark.parametrize(("fields", "problem"), [
    ({"snooze_events": "-3"}, "'snooze_events' must be between 1 and"),
    ({"snooze_events": "0"}, "'snooze_events' must be between 1 and"),
    ({"snooze_per_hour": "0"}, "'snooze_per_hour' must be between 1 and"),
    ({"snooze_hours": "-1"}, "'snooze_hours' must be between 1 and 8784"),
    ({"snooze_events": "three"}, "'snooze_events' must be an integer"),
    ({"snooze_until": "next tuesday"}, "'snooze_until' must be a time like"),
    ({"snooze_until": "2020-01-01T00:00"}, "'snooze_until' is in the past"),
    ({"snooze_until": local(time.time() + 86_400), "snooze_hours": "2"},
     "give one end time for a snooze"),
    ({}, "Snooze needs a condition"),
])
def test_bad_values_are_a_400_on_the_page_and_change_nothing(
        server: Server, fields: dict[str, str], problem: str) -> None:
    session = logged_in(server)
    ids = rows(listing(session, server))
    response = bulk(session, server, [ids["SnoozeA"], ids["SnoozeB"]],
                    **{"snooze_events": "", **fields})
    assert response.status_code == 400
    assert '<p class="problem">' in response.text and problem in html.unescape(response.text)
    assert sorted(rows(listing(session, server))) == CLASSES
    page = session.get(server.project_url(f"/errors/{ids['SnoozeA']}"), timeout=10).text
    assert 'class="actor"' not in page


def test_the_other_buttons_do_not_read_the_snooze_fields(server: Server) -> None:
    session = logged_in(server)
    ids = rows(listing(session, server))
    response = bulk(session, server, [ids["SnoozeA"]], action="", status="ignored",
                    snooze_events="5")
    assert response.status_code == 303
    group = requests.get(server.project_api(f"/error-groups/{ids['SnoozeA']}"),
                         headers=BEARER, timeout=10).json()["group"]
    assert (group["status"], group["snooze_count"]) == ("ignored", None)


def test_the_api_bulk_route(server: Server) -> None:
    session = logged_in(server)
    ids = {cls: int(gid) for cls, gid in rows(listing(session, server)).items()}
    url = server.project_api("/error-groups/bulk-status")
    two = [ids["SnoozeA"], ids["SnoozeB"]]
    for body, problem in (
            ({"status": "ignored"}, "groups must be a list"),
            ({"status": "ignored", "groups": []}, "groups must be a list"),
            ({"status": "ignored", "groups": ["1"]}, "each of groups must be"),
            ({"status": "ignored", "groups": [True]}, "each of groups must be"),
            ({"status": "ignored", "groups": list(range(1, 502))}, "at most 500 groups"),
            ({"status": "gone", "groups": two}, "status must be one of"),
            ({"status": "open", "groups": two, "snooze": {"events": 1}}, "only an ignored"),
            ({"status": "ignored", "groups": two, "snooze": {"events": -1}},
             "must be a positive integer"),
            ({"status": "ignored", "groups": two, "snooze": {"until_us": 1}}, "in the past"),
            ({"status": "ignored", "groups": two,
              "snooze": {"until_us": 2**62, "hours": 1}}, "one end time"),
            ({"status": "ignored", "groups": two, "snooze": {"hours": 10**6}}, "at most 8784"),
            ({"status": "ignored", "groups": two, "snooze": {}}, "snooze must be an object")):
        response = requests.post(url, json=body, headers=BEARER, timeout=10)
        assert response.status_code == 400 and problem in response.json()["error"], body
    assert sorted(rows(listing(session, server))) == CLASSES  # nothing changed
    done = requests.post(url, headers=BEARER, timeout=10, json={
        "status": "ignored", "groups": [*two, 2**40], "snooze": {"events": 1, "per_hour": 5}})
    assert done.status_code == 200 and done.json() == {"changed": 2}
    assert list(rows(listing(session, server))) == ["SnoozeC"]
    # Plain bulk changes through the same route.
    reopened = requests.post(url, headers=BEARER, timeout=10,
                             json={"status": "open", "groups": [ids["SnoozeA"]]})
    assert reopened.json() == {"changed": 1}
    page = session.get(server.project_url(f"/errors/{ids['SnoozeA']}"), timeout=10).text
    assert len(re.findall(r'class="actor">admin token<', page)) == 2
    assert "Snoozed until" not in page
