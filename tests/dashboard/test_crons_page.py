"""The Crons page and its API (dashboard/crons.py) over HTTP against the real server:
a monitor made through the API (a bad configuration a 400 naming the field), its
check-ins from the curl door on the list and the monitor's page, with what a client
sent escaped."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, XSS
from tests.extensions.alerts.test_delivery import wait_until
from tests.receiver.sentry.helpers import KEY, KEYS, project_id
from tests.support.server import Server

API = "/api/v1/projects/acme/crons"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def server(start: Callable[..., Server], sqlite_url: str) -> Server:
    return start(sqlite_url, keys=KEYS, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN,
                                             "SOUNDING__CRONS__CHECK_EVERY_S": "0.2"})


def test_a_monitor_made_by_the_api_and_shown_with_its_check_ins(server: Server) -> None:
    bad = requests.post(server.base + API, headers=ADMIN, timeout=10, json={
        "slug": "nightly", "monitor_config": {"schedule": {"type": "crontab",
                                                           "value": "0 25 * * *"}}})
    assert bad.status_code == 400 and "monitor_config.schedule.value" in bad.text
    bad = requests.post(server.base + API, headers=ADMIN, timeout=10, json={
        "slug": "no slug", "monitor_config": {"schedule": "@daily"}})
    assert bad.status_code == 400 and "slug" in bad.text
    made = requests.post(server.base + API, headers=ADMIN, timeout=10, json={
        "slug": "nightly", "monitor_config": {"schedule": {"type": "crontab",
                                                           "value": "0 3 * * *"},
                                              "timezone": "Europe/Riga", "max_runtime": 90}})
    assert made.status_code == 201, made.text
    assert (made.json()["schedule"], made.json()["max_runtime"], made.json()["status"]) == (
        "0 3 * * * (Europe/Riga)", 90, None)
    listed = requests.get(server.base + API, headers=ADMIN, timeout=10).json()["monitors"]
    assert [m["slug"] for m in listed] == ["nightly"]

    door = f"{server.base}/api/{project_id(server)}/cron/nightly/{KEY}/"
    assert requests.get(door, params={"status": "error", "environment": XSS,
                                      "duration": "2.5"}, timeout=10).status_code == 202
    wait_until(lambda: requests.get(f"{server.base}{API}/nightly", headers=ADMIN,
                                    timeout=10).json()["check_ins"], "the check-in", server)
    page = requests.get(f"{server.base}/projects/acme/crons/nightly", headers=ADMIN,
                        timeout=10)
    assert page.status_code == 200
    assert XSS not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert 'data-status="error"' in page.text and "0 3 * * * (Europe/Riga)" in page.text
    assert ">2500 ms<" in page.text  # the run's duration
    listing = requests.get(f"{server.base}/projects/acme/crons", headers=ADMIN, timeout=10)
    assert listing.status_code == 200 and 'data-slug="nightly"' in listing.text
    assert requests.get(f"{server.base}/projects/acme/crons/unknown", headers=ADMIN,
                        timeout=10).status_code == 404
