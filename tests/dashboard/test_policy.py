"""A project's policy on the read API and the dashboard (dashboard/policy.py): set by
an admin, checked (a 400 names the bad key), stored (project_policies), laid over
the configuration's, and applied by the collector within policy.refresh_seconds;
removed again with nulls. On SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.dashboard.test_sessions import xsrf_of
from tests.support.server import Server

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
POLICY = {"scrubbing": {"emails": True, "rules": [{"pattern": r"ORD-\d+", "action": "mask"}]},
          "filters": {"releases": ["*-dev"]},
          "detectors": {"n_plus_one": {"min_spans": 10}}}


def api(server: Server) -> str:
    return server.base + "/api/v1/projects/acme/policy"


def error(message: str, release: str) -> dict[str, Any]:
    return {"exception_class": "Boom", "message": message, "backtrace": ["a.py:1"],
            "fingerprint": message, "release": release}


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_policy_set_on_the_api_is_stored_and_applied(
        db_url: str, start: Callable[..., Server]) -> None:
    server = start(db_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN,
                                "SOUNDING__POLICY__REFRESH_SECONDS": "0.2",
                                "SOUNDING__POLICY__SCRUBBING__IP_ADDRESSES": "true"})
    shown = requests.get(api(server), headers=ADMIN, timeout=10).json()
    assert shown["stored"] is None
    assert shown["effective"]["scrubbing"]["ip_addresses"] is True  # the configuration's

    bad = requests.post(api(server), headers=ADMIN, timeout=10, json={
        "scrubbing": {"rules": [{"pattern": "(", "action": "mask"}]}})
    assert bad.status_code == 400 and "scrubbing.rules[0].pattern" in bad.text
    assert requests.post(api(server), headers=ADMIN, timeout=10,
                         json={"filters": {"ip_ranges": ["nope"]}}).status_code == 400
    bad = requests.post(api(server), headers=ADMIN, timeout=10,
                        json={"detectors": {"slow_query": {"min_ms": "fast"}}})
    assert bad.status_code == 400 and "detectors.slow_query.min_ms must be a number" in bad.text
    assert requests.get(api(server), headers=ADMIN, timeout=10).json()["stored"] is None

    answer = requests.post(api(server), headers=ADMIN, timeout=10, json=POLICY)
    assert answer.status_code == 200, answer.text
    shown = requests.get(api(server), headers=ADMIN, timeout=10).json()
    assert shown["stored"] == POLICY
    assert server.query("SELECT updated_by FROM project_policies")[0][0] == "admin token"
    wait_for(lambda: requests.get(api(server), headers=ADMIN, timeout=10).json()[
        "effective"]["filters"]["releases"] == ["*-dev"], "the policy was not applied")
    effective = requests.get(api(server), headers=ADMIN, timeout=10).json()["effective"]
    # Laid over the configuration: its ip_addresses stays, the project adds the rest.
    assert effective["scrubbing"]["ip_addresses"] is True
    assert effective["scrubbing"]["emails"] is True
    assert effective["detectors"]["n_plus_one"] == {"enabled": True, "min_spans": 10,
                                                    "min_total_ms": 50.0}

    assert server.post("/ingest/errors", json=error("ORD-7 by ada@example.com from 10.1.1.1",
                                                    "2.0")).status_code == 202
    assert server.post("/ingest/errors", json=error("dev build", "2.1-dev")).status_code == 202
    (stored,) = server.query("SELECT message FROM error_events")
    assert stored.message == "[Filtered] by [Filtered] from [Filtered]"

    removed = requests.post(api(server), headers=ADMIN, timeout=10,
                            json={"scrubbing": None, "filters": None})
    assert removed.status_code == 200 and removed.json()["stored"] is None
    assert not server.query("SELECT project_id FROM project_policies")
    # Each change is in the audit log, as who made it, with its before and after.
    audit = requests.get(server.base + "/api/v1/audit", headers=ADMIN, timeout=10,
                         params={"project": "acme", "action": "config"}).json()["entries"]
    assert [(e["action"], e["actor_name"]) for e in audit] == 2 * [  # the newest first
        ("config.detectors", "admin token"), ("config.filter", "admin token"),
        ("config.scrubbing", "admin token")]
    assert audit[4]["after"] == POLICY["filters"] and audit[0]["after"] == {}
    assert audit[3]["after"] == POLICY["detectors"]


def test_the_policy_page_shows_and_saves_the_policy(
        sqlite_url: str, start: Callable[..., Server]) -> None:
    server = start(sqlite_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    session = requests.Session()
    xsrf = xsrf_of(session.get(server.base + "/login", timeout=10).text)
    assert session.post(server.base + "/login", timeout=10, allow_redirects=False, data={
        "_xsrf": xsrf, "token": ADMIN_TOKEN, "next": "/"}).status_code in (302, 303)
    page = session.get(server.base + "/projects/acme/policy", timeout=10)
    assert page.status_code == 200 and 'id="policy"' in page.text
    xsrf = xsrf_of(page.text)
    bad = session.post(server.base + "/projects/acme/policy", timeout=10, data={
        "_xsrf": xsrf, "policy": '{"filters": {"releases": "<b>x</b>", "bogus": 1}}'})
    assert bad.status_code == 400 and "filters.bogus is not a setting" in bad.text
    assert "<b>x</b>" not in bad.text  # what was sent is shown escaped
    saved = session.post(server.base + "/projects/acme/policy", timeout=10, data={
        "_xsrf": xsrf, "policy": '{"filters": {"web_crawlers": true}}'}, allow_redirects=False)
    assert saved.status_code == 303
    assert server.query("SELECT filters FROM project_policies")[0][0] in (
        '{"web_crawlers": true}', {"web_crawlers": True})
