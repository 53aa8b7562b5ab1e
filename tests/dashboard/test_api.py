"""The read API and the dashboard's access rules, over HTTP against the real server."""

from __future__ import annotations

import re

import requests

from tests.dashboard.data import ADMIN_TOKEN, XSS, attr, checkout_trace, error, post_ok
from tests.support.server import Server

API = "/api/v1/projects/acme"


def admin() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def groups(server: Server, **params: str) -> list[dict[str, object]]:
    response = requests.get(server.base + API + "/error-groups", headers=admin(),
                            params=params, timeout=10)
    assert response.status_code == 200, response.text
    return [item["group"] for item in response.json()["items"]]


def test_ingest_keys_never_read(dash_server: Server) -> None:
    for path in ("/api/v1/projects", API + "/error-groups", API + "/traces"):
        response = requests.get(dash_server.base + path, timeout=10,
                                headers={"Authorization": f"Bearer {dash_server.key}"})
        assert response.status_code == 401, path
        assert requests.get(dash_server.base + path, timeout=10).status_code == 401


def test_pages_without_login_redirect_to_the_login_page(dash_server: Server) -> None:
    response = requests.get(dash_server.base + "/projects/acme/errors", timeout=10,
                            allow_redirects=False)
    assert response.status_code == 302
    assert response.headers["Location"] == "/login?next=%2Fprojects%2Facme%2Ferrors"


def test_wrong_admin_token_is_refused_at_login(dash_server: Server) -> None:
    session = requests.Session()
    form = session.get(dash_server.base + "/login", timeout=10).text
    xsrf = re.search(r'name="_xsrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
    response = session.post(dash_server.base + "/login", timeout=10, allow_redirects=False,
                            data={"_xsrf": xsrf, "token": "not-the-token", "next": "/"})
    assert response.status_code == 401
    assert "not valid" in response.text


def test_group_list_filters_sorts_and_status_changes(dash_server: Server) -> None:
    post_ok(dash_server, "/ingest/errors/batch", {"errors": [
        error("api-a", timestamp="2026-11-20T10:00:00Z"),
        error("api-a", timestamp="2026-11-20T12:00:00Z"),
        error("api-b", timestamp="2026-11-19T10:00:00Z"),
    ]})
    listed = {g["fingerprint"]: g for g in groups(dash_server, status="all")}
    assert listed["api-a"]["count"] == 2
    by_count = [g["fingerprint"] for g in groups(dash_server, sort="count")]
    assert by_count.index("api-a") < by_count.index("api-b")
    group_id = listed["api-b"]["id"]
    url = f"{dash_server.base}{API}/error-groups/{group_id}/status"
    response = requests.post(url, json={"status": "ignored"}, headers=admin(), timeout=10)
    assert response.status_code == 200 and response.json()["status"] == "ignored"
    assert "api-b" not in [g["fingerprint"] for g in groups(dash_server)]
    assert "api-b" in [g["fingerprint"] for g in groups(dash_server, status="ignored")]
    bad = requests.post(url, json={"status": "gone"}, headers=admin(), timeout=10)
    assert bad.status_code == 400


def test_state_change_with_the_session_cookie_needs_the_xsrf_token(dash_server: Server) -> None:
    post_ok(dash_server, "/ingest/errors", error("csrf-target"))
    (target,) = [g for g in groups(dash_server) if g["fingerprint"] == "csrf-target"]
    session = requests.Session()
    form = session.get(dash_server.base + "/login", timeout=10).text
    xsrf = re.search(r'name="_xsrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
    session.post(dash_server.base + "/login", data={"_xsrf": xsrf, "token": ADMIN_TOKEN},
                 timeout=10)
    url = f"{dash_server.base}/projects/acme/errors/{target['id']}/status"
    forged = session.post(url, data={"status": "resolved"}, timeout=10, allow_redirects=False)
    assert forged.status_code == 403
    # The login form's token belongs to no session: it does not change anything either.
    login_token = session.post(url, data={"status": "resolved", "_xsrf": xsrf}, timeout=10,
                               allow_redirects=False)
    assert login_token.status_code == 403
    assert [g["status"] for g in groups(dash_server, status="all")
            if g["fingerprint"] == "csrf-target"] == ["open"]
    page = session.get(f"{dash_server.base}/projects/acme/errors/{target['id']}", timeout=10)
    mine = re.search(r'name="_xsrf" value="([^"]+)"', page.text).group(1)  # type: ignore
    genuine = session.post(url, data={"status": "resolved", "_xsrf": mine}, timeout=10,
                           allow_redirects=False)
    assert genuine.status_code == 303


def test_client_data_is_escaped_in_pages(dash_server: Server) -> None:
    post_ok(dash_server, "/ingest/errors", error("xss-api", exception_class=XSS, message=XSS,
                                                 params={"q": XSS}))
    (group,) = [g for g in groups(dash_server) if g["fingerprint"] == "xss-api"]
    session = requests.Session()
    session.headers.update(admin())
    for path in ("/projects/acme/errors", f"/projects/acme/errors/{group['id']}"):
        html = session.get(dash_server.base + path, timeout=10).text
        assert XSS not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_trace_api_returns_the_spans_and_linked_errors(dash_server: Server) -> None:
    trace_id, body = checkout_trace()
    post_ok(dash_server, "/ingest/v1/traces", body)
    post_ok(dash_server, "/ingest/errors", error("in-trace"),
            headers={"traceparent": f"00-{trace_id}-{'ab' * 8}-01"})
    response = requests.get(f"{dash_server.base}{API}/traces/{trace_id}", headers=admin(),
                            timeout=10)
    assert response.status_code == 200
    document = response.json()
    assert len(document["rows"]) == 6
    categories = {row["span"]["name"]: row["span"]["category"] for row in document["rows"]}
    assert categories["SELECT orders"] == "database"
    assert categories["search products"] == "search"
    assert categories["publish order.created"] == "messaging"
    assert "in-trace" in response.text
    missing = requests.get(f"{dash_server.base}{API}/traces/{'0' * 31}1", headers=admin(),
                           timeout=10)
    assert missing.status_code == 404


def test_first_run_generates_an_admin_token_printed_once(start: object) -> None:
    server = start()  # type: ignore[operator]
    log = server.wait_for_log("Log in at")
    token = re.search(r"^\s+(sadm_\S+)$", log, re.MULTILINE).group(1)  # type: ignore[union-attr]
    ok = requests.get(server.base + "/api/v1/projects", timeout=10,
                      headers={"Authorization": f"Bearer {token}"})
    assert ok.status_code == 200
    assert [p["name"] for p in ok.json()["projects"]] == ["acme"]
    stored = server.query("SELECT value FROM dashboard_secrets")
    assert token not in {row.value for row in stored}
    assert server.stop() == 0
    again = start(server.db_url)  # type: ignore[operator]
    assert again.stop() == 0
    assert "sadm_" not in again.log()


def test_an_error_from_a_span_shows_its_service_environment_and_release(
        dash_server: Server) -> None:
    trace_id, body = checkout_trace(service="origin-shop")
    (resource,) = body["resourceSpans"]
    resource["resource"]["attributes"].append(attr("service.version", "3.1.4"))
    root = resource["scopeSpans"][0]["spans"][0]
    root["events"] = [{"name": "exception", "timeUnixNano": root["startTimeUnixNano"],
                       "attributes": [attr("exception.type", "OriginError"),
                                      attr("exception.message", "from a span")]}]
    post_ok(dash_server, "/ingest/v1/traces", body)
    (group,) = [g for g in groups(dash_server) if g["exception_class"] == "OriginError"]
    response = requests.get(f"{dash_server.base}{API}/error-groups/{group['id']}",
                            headers=admin(), timeout=10)
    assert response.status_code == 200
    document = response.json()
    origin = {"service": "origin-shop", "environment": "production", "release": "3.1.4",
              "log_time_ns": None}
    assert {k: document["event"][k] for k in origin} == origin
    (occurrence,) = document["occurrences"]
    assert {k: occurrence[k] for k in origin} == origin
    assert occurrence["trace_id"] == trace_id
    html = requests.get(f"{dash_server.base}/projects/acme/errors/{group['id']}",
                        headers=admin(), timeout=10).text
    for css, value in (("service", "origin-shop"), ("environment", "production"),
                       ("release", "3.1.4")):
        assert f'<dd class="{css}">{value}</dd>' in html
