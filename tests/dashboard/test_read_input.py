"""Out-of-range input to the read API and the pages (an admin's, or anyone's for the
static files) is a 400 naming the parameter, or a 404: never a 500."""

from __future__ import annotations

import html

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, error, post_ok
from tests.support.server import Server

PAGES = "/projects/acme"
API = "/api/v1/projects/acme"
RANGED = ("/errors/{group}", "/performance", "/deploys", "/traces", "/logs", "/metrics")
API_RANGED = ("/error-groups/{group}", "/performance", "/deploys", "/traces", "/logs")


def admin() -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {ADMIN_TOKEN}"
    return session


@pytest.fixture(scope="module")
def group(dash_server: Server) -> int:
    post_ok(dash_server, "/ingest/errors", error("input-rules"))
    response = admin().get(dash_server.base + API + "/error-groups", timeout=10)
    (found,) = [item["group"]["id"] for item in response.json()["items"]
                if item["group"]["fingerprint"] == "input-rules"]
    return int(found)


@pytest.mark.parametrize("group_id", [str(2**63), str(2**64 + 5), "9" * 40, "-1", "abc",
                                      "1.5", "%00"])
def test_group_ids_out_of_range_or_malformed_are_404(dash_server: Server,
                                                     group_id: str) -> None:
    session = admin()
    for path in (f"{PAGES}/errors/{group_id}", f"{API}/error-groups/{group_id}"):
        response = session.get(dash_server.base + path, timeout=10)
        assert response.status_code == 404, (path, response.status_code, response.text)
    for path in (f"{PAGES}/errors/{group_id}/status", f"{API}/error-groups/{group_id}/status"):
        response = session.post(dash_server.base + path, json={"status": "resolved"},
                                data=None, timeout=10, allow_redirects=False)
        assert response.status_code == 404, (path, response.status_code, response.text)


def test_an_occurrence_id_out_of_range_is_404_and_a_malformed_one_400(
        dash_server: Server, group: int) -> None:
    session = admin()
    for prefix in (f"{PAGES}/errors/{group}", f"{API}/error-groups/{group}"):
        for event, status in ((str(2**63), 404), ("9" * 30, 404), ("abc", 400), ("-1", 400)):
            response = session.get(dash_server.base + prefix, params={"event": event},
                                   timeout=10)
            assert response.status_code == status, (prefix, event, response.text)
            if status == 400 and prefix.startswith(API):
                assert "'event'" in response.json()["error"]


@pytest.mark.parametrize(("params", "named"), [
    ({"from": "0001-01-01", "to": "0001-01-02"}, "from"),
    ({"from": "0001-01-01T00:00:00+14:00", "to": "2026-01-01"}, "from"),
    ({"from": "1677-09-21T00:12:43", "to": "1677-09-22"}, "from"),
    ({"from": "1969-12-31T23:59:59", "to": "1970-01-02"}, "from"),
    ({"from": "9999-12-30", "to": "9999-12-31T23:59:59"}, "from"),
    ({"from": "2262-04-01", "to": "2262-04-11T23:47:17"}, "to"),
    ({"from": "2262-04-01", "to": "9999-12-31T23:59:59.999999Z"}, "to"),
    ({"from": "2026-01-01", "to": "nonsense"}, "to"),
])
def test_custom_ranges_beyond_the_time_range_are_400_naming_the_parameter(
        dash_server: Server, group: int, params: dict[str, str], named: str) -> None:
    session = admin()
    query = {"range": "custom", **params}
    for prefix, paths in ((PAGES, RANGED), (API, API_RANGED)):
        for path in paths:
            url = dash_server.base + prefix + path.format(group=group)
            response = session.get(url, params=query, timeout=10)
            assert response.status_code == 400, (url, params, response.status_code)
            assert f"'{named}'" in html.unescape(response.text), response.text


def test_custom_ranges_at_the_edges_of_the_time_range_are_shown(
        dash_server: Server, group: int) -> None:
    session = admin()
    for query in ({"from": "1970-01-01T00:00:00Z", "to": "1970-01-02"},
                  {"from": "2262-01-01", "to": "2262-04-11T23:47:16Z"},
                  {"from": "2262-04-11T23:00:00", "to": "2262-04-11T23:47:16"}):
        for prefix, paths in ((PAGES, RANGED), (API, API_RANGED)):
            for path in paths:
                url = dash_server.base + prefix + path.format(group=group)
                response = session.get(url, params={"range": "custom", **query}, timeout=10)
                assert response.status_code == 200, (url, query, response.text[-1500:])


@pytest.mark.parametrize(("path", "params"), [
    ("/error-groups", {"limit": "0"}), ("/error-groups", {"limit": "501"}),
    ("/error-groups", {"limit": "9" * 30}), ("/error-groups", {"limit": "ten"}),
    ("/error-groups", {"offset": "-1"}), ("/error-groups", {"offset": "9" * 30}),
    ("/error-groups", {"sort": "loudest"}), ("/error-groups", {"status": "gone"}),
    ("/error-groups", {"status": ","}),
    ("/deploys", {"window": "7h"}), ("/deploys", {"range": "2d"}),
    ("/traces", {"min_duration_ms": "nan"}), ("/traces", {"min_duration_ms": "inf"}),
    ("/traces", {"min_duration_ms": "-1"}), ("/traces", {"min_duration_ms": "1e400"}),
    ("/traces", {"min_duration_ms": "1e13"}), ("/traces", {"status": "broken"}),
    ("/performance", {"range": "custom"}),
    ("/logs", {"severity": "26"}), ("/logs", {"severity": "9" * 30}),
    ("/logs", {"trace_id": "g" * 32}), ("/logs", {"after": "9" * 30}),
    ("/logs", {"after": f"{2**63}"}), ("/logs", {"after": "1." + "ab" * 17}),
    ("/logs", {"limit": "9" * 30}), ("/logs", {"attr": "novalue"}),
    ("/logs", {"attr": [f"k{i}=v" for i in range(11)]}),
    ("/metrics/any", {"step": "0"}), ("/metrics/any", {"max_groups": "0"}),
    ("/metrics/any", {"agg": "nan"}), ("/metrics/any", {"range": "forever"}),
])
def test_every_other_parameter_is_checked(dash_server: Server, path: str,
                                          params: dict[str, str]) -> None:
    response = admin().get(dash_server.base + API + path, params=params, timeout=10)
    assert response.status_code == 400, (path, params, response.text)
    assert response.json()["error"]


@pytest.mark.parametrize(("path", "params"), [
    ("/errors", {"page": "0"}), ("/errors", {"page": "9" * 30}),
    ("/errors", {"status": "gone"}), ("/errors", {"sort": "loudest"}),
    ("/deploys", {"window": "7h"}), ("/traces", {"min_ms": "nan"}),
    ("/traces", {"status": "broken"}), ("/performance", {"range": "forever"}),
    ("/logs", {"page": "0"}), ("/logs", {"at": "-1"}), ("/logs", {"at": "9" * 30}),
    ("/logs", {"severity": "-1"}), ("/logs", {"after": "1"}),
    ("/metrics", {"range": "forever"}), ("/metrics", {"metric": "any", "step": "-1"}),
])
def test_every_page_parameter_is_checked(dash_server: Server, path: str,
                                         params: dict[str, str]) -> None:
    response = admin().get(dash_server.base + PAGES + path, params=params, timeout=10)
    assert response.status_code == 400, (path, params, response.text)


def test_odd_names_in_paths_are_404(dash_server: Server) -> None:
    session = admin()
    for path in ("/projects/%00/errors", "/projects/no-such/errors", API[:-4] + "%00/traces",
                 f"{PAGES}/traces/abc", f"{PAGES}/traces/{'0' * 33}", f"{API}/traces/xyz",
                 f"{API}/traces/{'f' * 31}", f"{API}/logs/{'f' * 31}", f"{API}/logs/xyz",
                 f"{API}/logs/{'f' * 33}", f"{API}/logs/{'0' * 32}", f"{PAGES}/logs/x",
                 f"{API}/traces/{'f' * 31}", f"{API}/metrics/%00", f"{API}/metrics/no-such"):
        assert session.get(dash_server.base + path, timeout=10).status_code == 404, path


def test_a_status_change_body_that_is_not_a_status_is_400(dash_server: Server,
                                                          group: int) -> None:
    url = f"{dash_server.base}{API}/error-groups/{group}/status"
    for body in (b"[" * 100_000, b'{"status": ' * 50_000, b"\xff\xfe", b'"resolved"',
                 b'{"status": ["resolved"]}', b'{"status": {"a": 1}}'):
        response = admin().post(url, data=body, timeout=10)
        assert response.status_code == 400, (body[:20], response.text)


@pytest.mark.parametrize("path", [
    "/static/%00", "/static/app.css%00", "/static/..%2f..%2fetc/passwd",
    "/static/..%2fapp.py", "/static/%2e%2e/app.py", "/static/" + "a" * 5000,
    "/static/" + "a/" * 2000 + "b", "/static/", "/static/.", "/static/nope.js",
    "/static/app.css/", "/static/%ff", "/static/%5c..%5capp.py",
])
def test_odd_static_paths_are_404_without_login(dash_server: Server, path: str) -> None:
    response = requests.get(dash_server.base + path, timeout=10)
    assert response.status_code == 404, (path, response.status_code)


def test_static_files_are_served(dash_server: Server) -> None:
    response = requests.get(dash_server.base + "/static/app.css", timeout=10)
    assert response.status_code == 200 and "body" in response.text
