"""The Stats page and its read API against the real server, on both stores: limits
set through the API (admins only) apply to ingestion within the refresh, what was
accepted and refused is counted per category and outcome, client reports are shown,
and a bad limit is a 400 naming it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.dashboard.test_sessions import login, xsrf_of
from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import KEYS, post_envelope
from tests.receiver.test_limits import post_error
from tests.support.server import Server

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def start_stats(start: Callable[..., Server], db_url: str, tmp_path: Path) -> Server:
    path = tmp_path / "stats.yaml"
    path.write_text("auth:\n  limits:\n    usage_flush_seconds: 0.3\n"
                    "    refresh_seconds: 0.3\n")
    return start(db_url, keys=KEYS, config=str(path),
                 env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})


def usage(server: Server, expect: Callable[[dict], bool]) -> dict:
    deadline = time.monotonic() + 10
    while True:
        found = requests.get(server.base + "/api/v1/projects/acme/usage", headers=ADMIN,
                             timeout=10).json()
        if expect(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_limits_set_through_the_api_apply_and_usage_counts_them(
        start: Callable[..., Server], db_url: str, tmp_path: Path) -> None:
    server = start_stats(start, db_url, tmp_path)
    url = server.base + "/api/v1/projects/acme/limits"
    assert requests.get(url, headers=ADMIN, timeout=10).json()["limits"] == {}
    answer = requests.post(url, headers=ADMIN, timeout=10, json={
        "limits": {"error": {"rate": 0.01, "burst": 3}}, "spike_protection": 10})
    assert answer.status_code == 200, answer.text
    assert answer.json()["limits"]["error"] == {"rate": 0.01, "burst": 3.0, "quota": 0,
                                                 "period": "day"}
    assert answer.json()["spike_protection"]["multiple"] == 10
    (change,) = requests.get(server.base + "/api/v1/audit", headers=ADMIN, timeout=10, params={
        "project": "acme", "action": "config.rate_limit"}).json()["entries"]
    assert (change["actor_name"], change["before"], change["after"]) == (
        "admin token", {}, {"error": {"rate": 0.01, "burst": 3.0, "quota": 0, "period": "day"}})
    time.sleep(1)  # every collector reads the limits again within refresh_seconds
    statuses = [post_error(server).status_code for _ in range(5)]
    assert statuses == [202, 202, 202, 429, 429]
    report = envelope({}, [item("client_report", {"discarded_events": [
        {"reason": "queue_overflow", "category": "error", "quantity": 7},
        {"reason": "<script>", "category": "error", "quantity": 2}]})])
    assert post_envelope(server, report).status_code == 200
    found = usage(server, lambda u: u["client_discarded"] and "error" in u["totals"]
                  and u["totals"]["error"].get("rate_limited") is not None)
    assert found["totals"]["error"]["accepted"] == 3
    assert found["requests_refused_unread"].get("rate_limited", 0) + found["totals"][
        "error"]["rate_limited"] == 2
    assert {(c["reason"], c["records"]) for c in found["client_discarded"]} == {
        ("queue_overflow", 7), ("other", 2)}
    assert len(found["hourly"]) == 1

    page = login(server).get(server.base + "/projects/acme/stats", timeout=10).text
    assert 'data-category="error"' in page and "queue_overflow" in page
    assert "&lt;script&gt;" not in page and "<script>" not in page.split("</head>")[1]


def test_a_bad_limit_is_a_400_naming_it_and_only_admins_set_limits(
        start: Callable[..., Server], sqlite_url: str, tmp_path: Path) -> None:
    server = start_stats(start, sqlite_url, tmp_path)
    url = server.base + "/api/v1/projects/acme/limits"
    for body, words in (({"limits": {"errors": {"rate": 1}}}, "unknown category 'errors'"),
                        ({"limits": {"error": {"rate": "fast"}}}, "limits.error.rate"),
                        ({"spike_protection": 1.1}, "between 1.5 and"),
                        ({"limit": {}}, "unknown key 'limit'")):
        answer = requests.post(url, headers=ADMIN, json=body, timeout=10)
        assert answer.status_code == 400 and words in answer.text, (body, answer.text)
    assert requests.post(url, json={"limits": {}}, timeout=10).status_code in (401, 403)
    session = login(server)
    page = session.get(server.base + "/projects/acme/stats", timeout=10).text
    form = {"_xsrf": xsrf_of(page), "error_rate": "-3", "spike_multiple": ""}
    refused = session.post(server.base + "/projects/acme/stats/limits", data=form,
                           timeout=10)
    assert refused.status_code == 400 and "error rate must be a number &gt;= 0" in refused.text
    form.update(error_rate="5", error_burst="10", span_quota="1000", span_period="month")
    saved = session.post(server.base + "/projects/acme/stats/limits", data=form, timeout=10)
    assert saved.status_code == 200 and "Limits saved" in saved.text
    limits = requests.get(url, headers=ADMIN, timeout=10).json()["limits"]
    assert limits == {"error": {"rate": 5.0, "burst": 10.0, "quota": 0, "period": "day"},
                      "span": {"rate": 0.0, "burst": 0.0, "quota": 1000, "period": "month"}}
