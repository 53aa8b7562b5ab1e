"""Merging error groups from the real server (SQLite and PostgreSQL): the error list's
bulk Merge, the group page's merged groups with Unmerge and the history lines, the
read/write API with its 400s and 404s, and a viewer refused server-side."""

from __future__ import annotations

import html
import re

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, XSS, error, post_ok
from tests.dashboard.test_error_workflow import XSRF, listing, logged_in, rows
from tests.dashboard.test_roles import create_user, password_login
from tests.support.server import Projects, Server

BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def server(dash_projects: Projects) -> Server:
    """The module's collector, as a project of this test's own sees it."""
    server = dash_projects.take()
    post_ok(server, "/ingest/errors/batch", {"errors": [
        *[error("pay", exception_class="PayError", message="card declined")] * 3,
        *[error("card", exception_class="CardError", message=XSS)] * 2,
        error("solo", exception_class="SoloError", message="alone")]})
    return server


def counts(text: str) -> dict[str, int]:
    """{exception class: events} of the listed groups."""
    return {cls: int(n.replace(",", "")) for cls, n in re.findall(
        r'<span class="exception-class">([^<]+)</span>.*?<td class="num count">([\d,]+)</td>',
        text, re.S)}


def api(server: Server, path: str, body: object = None, **kw: object) -> requests.Response:
    return requests.post(server.project_api(f"/error-groups/{path}"),
                         json=body, headers=kw.pop("headers", BEARER), timeout=10)  # type: ignore[arg-type]


def test_bulk_merge_keeps_the_group_with_most_events_and_unmerge_undoes_it(
        server: Server) -> None:
    session = logged_in(server)
    text = listing(session, server)
    ids = rows(text)
    assert 'class="bulk-merge"' in text and "the most events" in text
    xsrf = XSRF.search(text)
    assert xsrf is not None
    back = f"/projects/{server.project}/errors"
    done = session.post(server.project_url("/errors/merge"), timeout=10,
                        allow_redirects=False,
                        data={"_xsrf": xsrf.group(1), "back": back,
                              "group": [ids["CardError"], ids["PayError"]]})
    assert done.status_code == 303 and done.headers["Location"] == back
    assert counts(listing(session, server)) == {"PayError": 5, "SoloError": 1}
    # A later error of the merged fingerprint counts in the group it was merged into.
    post_ok(server, "/ingest/errors", error("card", exception_class="CardError"))
    assert counts(listing(session, server)) == {"PayError": 6, "SoloError": 1}
    page = session.get(server.project_url(f"/errors/{ids['PayError']}"), timeout=10).text
    assert f'<tr data-group-id="{ids["CardError"]}">' in page
    assert f"merged #{ids['CardError']} into this" in page
    assert 'by <span class="actor">admin token</span>' in page
    assert XSS not in page  # the merged group's message, escaped
    merged = session.get(server.project_url(f"/errors/{ids['CardError']}"),
                         timeout=10).text
    assert 'class="merged-into"' in merged
    undo = session.post(server.project_url(f"/errors/{ids['CardError']}/unmerge"),
                        data={"_xsrf": xsrf.group(1)}, timeout=10, allow_redirects=False)
    assert undo.status_code == 303
    assert undo.headers["Location"] == f"/projects/{server.project}/errors/{ids['PayError']}"
    assert counts(listing(session, server)) == {"PayError": 3, "CardError": 3, "SoloError": 1}
    page = session.get(server.project_url(f"/errors/{ids['PayError']}"), timeout=10).text
    assert f"unmerged #{ids['CardError']}" in page and "merged-groups" not in page
    again = session.post(server.project_url(f"/errors/{ids['CardError']}/unmerge"),
                         data={"_xsrf": xsrf.group(1)}, timeout=10)
    assert again.status_code == 400 and "is not merged" in html.unescape(again.text)


@pytest.mark.parametrize(("groups", "problem"), [
    ([], "tick at least two"), (["PayError"], "tick at least two"),
    (["x1", "PayError"], "must be an error group's id"),
])
def test_bad_bulk_merges_are_a_400(server: Server, groups: list[str], problem: str) -> None:
    session = logged_in(server)
    text = listing(session, server)
    ids, xsrf = rows(text), XSRF.search(text)
    assert xsrf is not None
    answer = session.post(server.project_url("/errors/merge"), timeout=10,
                          data={"_xsrf": xsrf.group(1),
                                "group": [ids.get(g, g) for g in groups]})
    assert answer.status_code == 400 and problem in html.unescape(answer.text)
    assert len(rows(listing(session, server))) == 3


def test_the_api_merges_into_the_named_group_and_refuses_clearly(server: Server) -> None:
    ids = {g["group"]["exception_class"]: g["group"]["id"] for g in requests.get(
        server.project_api("/error-groups"), headers=BEARER,
        timeout=10).json()["items"]}
    pay, card, solo = ids["PayError"], ids["CardError"], ids["SoloError"]
    for body, status, problem in [
        ({"into": pay, "groups": [pay]}, 400, "into itself"),
        ({"into": pay, "groups": []}, 400, "at least two groups"),
        ({"into": pay}, 400, "groups must be a list"),
        ({"into": "1", "groups": [card]}, 400, "into must be"),
        ({"into": pay, "groups": [card], "extra": 1}, 400, "the body must be"),
        ({"into": pay, "groups": [card, 999_999]}, 404, "no error group #999999"),
        ({"into": 2**40, "groups": [card]}, 404, "no error group"),
    ]:
        answer = api(server, "merge", body)
        assert (answer.status_code, problem in answer.text) == (status, True), answer.text
    bad_json = requests.post(server.project_api("/error-groups/merge"),
                             data=b"{", headers=BEARER, timeout=10)
    assert bad_json.status_code == 400 and "must be JSON" in bad_json.text
    done = api(server, "merge", {"into": solo, "groups": [pay, card]})
    assert done.status_code == 200, done.text
    assert done.json()["merged"] == sorted([pay, card])
    assert done.json()["group"]["count"] == 6 and done.json()["group"]["id"] == solo
    listed = requests.get(server.project_api("/error-groups"), headers=BEARER,
                          timeout=10).json()
    assert [(g["group"]["id"], g["group"]["count"]) for g in listed["items"]] == [(solo, 6)]
    detail = requests.get(server.project_api(f"/error-groups/{solo}"),
                          headers=BEARER, timeout=10).json()
    assert [m["id"] for m in detail["merged"]] == sorted([pay, card])
    assert len(detail["occurrences"]) == 6
    # Another project's groups are not this one's.
    other = requests.post(f"{server.base}/api/v1/projects/nope/error-groups/merge",
                          json={"into": solo, "groups": [pay]}, headers=BEARER, timeout=10)
    assert other.status_code == 404
    undo = api(server, f"{pay}/unmerge")
    assert undo.status_code == 200
    assert (undo.json()["unmerged_from"], undo.json()["group"]["count"]) == (solo, 3)
    assert api(server, f"{pay}/unmerge").status_code == 400
    assert api(server, "999999/unmerge").status_code == 404


def test_a_viewer_may_not_merge_or_unmerge(server: Server) -> None:
    create_user(server.db_url, "viewer@example.com", "viewer")
    session = password_login(server, "viewer@example.com").session  # type: ignore[attr-defined]
    text = listing(session, server)
    ids, xsrf = rows(text), XSRF.search(text)
    assert xsrf is not None
    for path, data in [("merge", {"group": [ids["PayError"], ids["CardError"]]}),
                       (f"{ids['CardError']}/unmerge", {})]:
        answer = session.post(server.project_url(f"/errors/{path}"), timeout=10,
                              data={"_xsrf": xsrf.group(1), **data})
        assert answer.status_code == 403 and "needs the member role" in answer.text
    answer = session.post(server.project_api("/error-groups/merge"),
                          json={"into": int(ids["PayError"]), "groups": [int(ids["CardError"])]},
                          headers={"X-XSRFToken": xsrf.group(1)}, timeout=10)
    assert answer.status_code == 403
    assert counts(listing(session, server)) == {"PayError": 3, "CardError": 2, "SoloError": 1}
