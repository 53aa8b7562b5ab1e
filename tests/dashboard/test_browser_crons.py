"""The Crons page in a real browser (Debian's Chromium driven by Playwright): a
monitor added with the page's form, its check-ins sent to the curl door, shown in
the list and on the monitor's page (a timeline tick and a row per run, with its
duration), a bad schedule answered with the field named."""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests

from tests.support.server import Server

pytestmark = pytest.mark.browser
SLUG = "browser-backup"  # the session's shared collector: a monitor of this test alone


def project_id(server: Server) -> int:
    return int(server.query("SELECT id FROM projects WHERE name = 'acme'")[0][0])


def test_a_monitor_added_on_the_page_shows_its_runs(page: Any, browser_server: Server) -> None:
    page.goto(browser_server.base + "/projects/acme/crons")
    form = page.locator("form.cron-form")
    form.locator("input[name=slug]").fill(SLUG)
    form.locator("select[name=schedule_type]").select_option("interval")
    form.locator("input[name=schedule]").fill("2")
    form.locator("select[name=unit]").select_option("hour")
    form.locator("input[name=max_runtime]").fill("45")
    form.locator("button[type=submit]").click()
    page.wait_for_url(f"**/projects/acme/crons/{SLUG}")
    assert page.locator(".cron-config .schedule").inner_text() == "every 2 hours"
    assert "45 min" in page.locator(".cron-config").inner_text()

    door = f"{browser_server.base}/api/{project_id(browser_server)}/cron/{SLUG}/" \
           f"{browser_server.key}/"
    for status, duration in (("ok", "12"), ("error", "3")):
        answer = requests.get(door, params={"status": status, "duration": duration},
                              timeout=10)
        assert answer.status_code == 202, answer.text
    deadline = time.monotonic() + 30
    while True:
        page.goto(browser_server.base + f"/projects/acme/crons/{SLUG}?range=24h")
        # The check-ins show once stored; their incident once the checker (every 10 s)
        # has applied them.
        applied = page.locator("table.cron-incidents tr.incident.open").count() == 1
        if (page.locator("tr.check-in").count() == 2 and applied) \
                or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    rows = page.locator("tr.check-in")
    assert [rows.nth(i).get_attribute("data-status") for i in range(2)] == ["error", "ok"]
    assert rows.nth(1).locator(".duration").inner_text() == "12.0 s"
    assert page.locator("ol.cron-timeline li.cron-ok").count() == 1
    assert page.locator("ol.cron-timeline li.cron-error").count() == 1
    assert page.locator("table.cron-incidents tr.incident.open").count() == 1
    assert page.locator(".cron-monitor").get_attribute("data-status") == "error"

    page.goto(browser_server.base + "/projects/acme/crons")
    row = page.locator(f"tr.monitor[data-slug='{SLUG}']")
    assert row.locator(".badge.cron-error").inner_text() == "error"
    assert "incident" in row.inner_text()
    # A bad crontab: the form's answer names the field.
    form = page.locator("form.cron-form")
    form.locator("input[name=slug]").fill(SLUG)
    form.locator("input[name=schedule]").fill("99 * * * *")
    form.locator("button[type=submit]").click()
    assert "monitor_config.schedule.value" in page.locator("body").inner_text()
