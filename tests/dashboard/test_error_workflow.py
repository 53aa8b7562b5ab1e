"""The error list's workflow from the real server (SQLite and PostgreSQL): the
search box, bulk Resolve / Ignore / Reopen (one form POST with the page's XSRF
token) and who made each change, on the group page."""

from __future__ import annotations

import html
import re

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, XSS, error, post_ok
from tests.support.server import Projects, Server

XSRF = re.compile(r'name="_xsrf" value="([^"]+)"')


@pytest.fixture
def server(dash_projects: Projects) -> Server:
    """The module's collector, as a project of this test's own sees it."""
    server = dash_projects.take()
    post_ok(server, "/ingest/errors/batch", {"errors": [
        error("checkout", exception_class="CheckoutError", message="card declined",
              release="1.0"),
        error("checkout", exception_class="CheckoutError", message="card declined",
              release="1.1", user_id="user-7"),
        error("report", exception_class="ReportError", message="disk full"),
        error("hostile", exception_class="HostileError", message=XSS)]})
    return server


def logged_in(server: Server) -> requests.Session:
    session = requests.Session()
    xsrf = XSRF.search(session.get(server.base + "/login", timeout=10).text)
    assert xsrf is not None
    session.post(server.base + "/login", data={"_xsrf": xsrf.group(1), "token": ADMIN_TOKEN},
                 timeout=10)
    return session


def rows(text: str) -> dict[str, str]:
    """{exception class: group id} of the listed groups."""
    return {cls: gid for gid, cls in re.findall(
        r'data-group-id="(\d+)">.*?<span class="exception-class">([^<]+)</span>', text,
        re.S)}


def listing(session: requests.Session, server: Server, **params: str) -> str:
    response = session.get(server.project_url("/errors"), params=params, timeout=10)
    assert response.status_code == 200, response.text
    return response.text


def test_search_narrows_the_list_and_stays_in_its_box(server: Server) -> None:
    session = logged_in(server)
    assert sorted(rows(listing(session, server))) == [
        "CheckoutError", "HostileError", "ReportError"]
    text = listing(session, server, q="DECLINED")
    assert list(rows(text)) == ["CheckoutError"]
    assert 'name="q" id="search" value="DECLINED"' in text
    assert list(rows(listing(session, server, q="<script>"))) == ["HostileError"]
    hostile = listing(session, server, q=XSS + "!")
    assert XSS not in hostile and html.escape(XSS) in hostile  # escaped, not run
    assert "matching" in hostile and not rows(hostile)
    too_long = session.get(server.project_url("/errors"), params={"q": "x" * 201},
                           timeout=10)
    assert too_long.status_code == 400
    assert "'q' must be at most 200" in html.unescape(too_long.text)
    api = session.get(server.project_api("/error-groups"),
                      params={"q": "report"}, timeout=10).json()
    assert [g["group"]["fingerprint"] for g in api["items"]] == ["report"] and api["q"] == "report"
    assert api["culprits"] == {"report": "app/billing.py in total"}
    assert api["facts"] == {"report": {"users": 1, "first_release": None}}


def test_rows_say_culprit_users_affected_and_first_release(server: Server) -> None:
    text = listing(logged_in(server), server)
    row = text[text.index("CheckoutError"):text.index("</tr>", text.index("CheckoutError"))]
    assert '<span class="users"' in row and ">2 users</span>" in row
    assert '<span class="first-release">first seen in 1.0</span>' in row
    assert 'class="culprit" title="where its latest occurrence failed">app/billing.py in total<' \
        in row
    report = text[text.index("ReportError"):text.index("</tr>", text.index("ReportError"))]
    assert ">1 user</span>" in report and "first seen in" not in report


def test_bulk_resolve_then_reopen_records_who_did_it(server: Server) -> None:
    session = logged_in(server)
    text = listing(session, server)
    ids = rows(text)
    xsrf = XSRF.search(text)
    assert xsrf is not None
    url = server.project_url("/errors/bulk-status")
    form = {"_xsrf": xsrf.group(1), "status": "resolved",
            "group": [ids["CheckoutError"], ids["ReportError"]],
            "back": f"/projects/{server.project}/errors?q=error"}
    forged = session.post(url, data={k: v for k, v in form.items() if k != "_xsrf"},
                          timeout=10, allow_redirects=False)
    assert forged.status_code == 403
    assert sorted(rows(listing(session, server))) == [
        "CheckoutError", "HostileError", "ReportError"]
    done = session.post(url, data=form, timeout=10, allow_redirects=False)
    assert done.status_code == 303
    assert done.headers["Location"] == f"/projects/{server.project}/errors?q=error"
    assert list(rows(listing(session, server))) == ["HostileError"]
    assert sorted(rows(listing(session, server, status="resolved"))) == [
        "CheckoutError", "ReportError"]
    group = session.get(server.project_url(f"/errors/{ids['CheckoutError']}"),
                        timeout=10).text
    assert '<span class="actor">admin token</span>' in group
    # Reopened: the header says Open, and no longer "Resolved <time>".
    reopened = session.post(url, data={**form, "status": "open", "back": "//evil.example"},
                            timeout=10, allow_redirects=False)
    assert reopened.status_code == 303
    # Only back to the list.
    assert reopened.headers["Location"] == f"/projects/{server.project}/errors"
    group = session.get(server.project_url(f"/errors/{ids['CheckoutError']}"),
                        timeout=10).text
    assert 'id="group-status">Open<' in group and "<dt>Resolved</dt>" not in group
    assert len(re.findall(r'class="actor">admin token<', group)) == 2


@pytest.mark.parametrize(("data", "problem"), [
    ({"status": "resolved"}, "tick at least one error group"),
    ({"status": "gone", "group": "1"}, "status must be one of"),
    ({"status": "resolved", "group": "x1"}, "must be an error group's id"),
    ({"status": "resolved", "group": [str(n) for n in range(501)]}, "at most 500 groups"),
])
def test_bad_bulk_requests_are_a_400_naming_the_problem(
        server: Server, data: dict[str, object], problem: str) -> None:
    session = logged_in(server)
    xsrf = XSRF.search(listing(session, server))
    assert xsrf is not None
    response = session.post(server.project_url("/errors/bulk-status"),
                            data={**data, "_xsrf": xsrf.group(1)}, timeout=10,
                            allow_redirects=False)
    assert response.status_code == 400 and problem in html.unescape(response.text)


def test_an_id_beyond_any_group_changes_nothing(server: Server) -> None:
    session = logged_in(server)
    xsrf = XSRF.search(listing(session, server))
    assert xsrf is not None
    response = session.post(server.project_url("/errors/bulk-status"),
                            data={"_xsrf": xsrf.group(1), "status": "resolved",
                                  "group": ["9" * 19, "4294967296"]},
                            timeout=10, allow_redirects=False)
    assert response.status_code == 303
    assert len(rows(listing(session, server))) == 3


def test_resolve_in_next_release_from_the_group_page_the_list_and_the_api(
        server: Server) -> None:
    post_ok(server, "/ingest/errors/batch", {"errors": [
        error("next-a", exception_class="NextA", release="3.0"),
        error("next-b", exception_class="NextB", release="3.0"),
        error("next-c", exception_class="NextC", release="3.0")]})
    session = logged_in(server)
    text = listing(session, server, q="next")
    ids = rows(text)
    xsrf = XSRF.search(text)
    assert xsrf is not None and 'class="bulk-resolved-next"' in text
    bulk = session.post(server.project_url("/errors/bulk-status?next_release=1"),
                        data={"_xsrf": xsrf.group(1), "status": "resolved",
                              "group": [ids["NextA"]]}, timeout=10, allow_redirects=False)
    assert bulk.status_code == 303
    page = session.get(server.project_url(f"/errors/{ids['NextA']}"), timeout=10).text
    assert '<span class="resolved-release">in the release after 3.0</span>' in page
    group_url = server.project_url(f"/errors/{ids['NextB']}/status")
    one = session.post(group_url, data={"_xsrf": xsrf.group(1), "status": "resolved",
                                        "next_release": "1"}, timeout=10,
                       allow_redirects=False)
    assert one.status_code == 303
    bad = session.post(group_url, data={"_xsrf": xsrf.group(1), "status": "resolved",
                                        "next_release": "yes"}, timeout=10)
    assert bad.status_code == 400 and "next_release must be 1 or 0" in bad.text
    api = server.project_api(f"/error-groups/{ids['NextC']}/status")
    bearer = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    wrong = requests.post(api, json={"status": "resolved", "next_release": "yes"},
                          headers=bearer, timeout=10)
    assert wrong.status_code == 400 and "next_release must be true or false" in wrong.text
    done = requests.post(api, json={"status": "resolved", "next_release": True},
                         headers=bearer, timeout=10)
    assert done.status_code == 200
    assert (done.json()["status"], done.json()["resolved_release"]) == ("resolved", "3.0")
    # An error of the old release keeps them resolved; one of the next reopens.
    post_ok(server, "/ingest/errors", error("next-c", exception_class="NextC", release="3.0"))
    assert "NextC" not in rows(listing(session, server, q="next"))
    post_ok(server, "/ingest/errors", error("next-c", exception_class="NextC", release="3.1"))
    assert list(rows(listing(session, server, q="next"))) == ["NextC"]


def test_snooze_from_the_group_page(server: Server) -> None:
    post_ok(server, "/ingest/errors", error("snoozy", exception_class="SnoozyError"))
    session = logged_in(server)
    text = listing(session, server, q="snoozy")
    group_id = rows(text)["SnoozyError"]
    xsrf = XSRF.search(text)
    assert xsrf is not None
    url = server.project_url(f"/errors/{group_id}/status")
    form = {"_xsrf": xsrf.group(1), "status": "ignored", "snooze_events": "2",
            "snooze_hours": "", "snooze_per_hour": "50"}
    for bad, problem in (({"snooze_events": "x"}, "'snooze_events' must be an integer"),
                         ({"snooze_events": "0"}, "'snooze_events' must be between 1"),
                         ({"status": "resolved"}, "only an ignored group can be snoozed")):
        response = session.post(url, data={**form, **bad}, timeout=10)
        assert response.status_code == 400 and problem in html.unescape(response.text)
    assert session.post(url, data=form, timeout=10,
                        allow_redirects=False).status_code == 303
    page = session.get(server.project_url(f"/errors/{group_id}"), timeout=10).text
    assert 'class="snoozed">3 events in all, or more than 50 in an hour<' in page
    post_ok(server, "/ingest/errors", error("snoozy", exception_class="SnoozyError"))
    assert "SnoozyError" not in rows(listing(session, server, q="snoozy"))
    post_ok(server, "/ingest/errors", error("snoozy", exception_class="SnoozyError"))
    assert "SnoozyError" in rows(listing(session, server, q="snoozy"))
    page = session.get(server.project_url(f"/errors/{group_id}"), timeout=10).text
    assert "the snooze ended" in page and 'id="group-status">Open<' in page


def test_snooze_through_the_api(server: Server) -> None:
    post_ok(server, "/ingest/errors", error("snooze-api", exception_class="SnoozeApiError"))
    session = logged_in(server)
    group_id = rows(listing(session, server, q="snooze-api"))["SnoozeApiError"]
    api = server.project_api(f"/error-groups/{group_id}/status")
    bearer = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    for body, problem in (
            ({"status": "ignored", "snooze": {"weeks": 1}}, "snooze must be an object"),
            ({"status": "ignored", "snooze": {"events": "3"}}, "must be a positive integer"),
            ({"status": "ignored", "snooze": {"events": True}}, "must be a positive integer"),
            ({"status": "ignored", "snooze": {"events": 10**13}}, "from 1 to 10^12"),
            ({"status": "open", "snooze": {"events": 3}}, "only an ignored group")):
        response = requests.post(api, json=body, headers=bearer, timeout=10)
        assert response.status_code == 400 and problem in response.text, body
    done = requests.post(api, json={"status": "ignored", "snooze": {"per_hour": 1}},
                         headers=bearer, timeout=10)
    assert done.status_code == 200 and done.json()["snooze_per_hour"] == 1
    post_ok(server, "/ingest/errors", error("snooze-api", exception_class="SnoozeApiError"))
    assert "SnoozeApiError" in rows(listing(session, server, q="snooze-api"))
