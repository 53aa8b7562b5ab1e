"""The Audit page in a real browser (Debian's Chromium driven by Playwright), logged in
with the admin token: a group resolved on its page is at the top of the Audit page
(reached by the header's link), newest first, with who did it and a link to the group;
a project named with markup is shown as text; the filter form narrows the records by
action and project, and clicking an actor filters by it."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, XSS, error, post_ok
from tests.support.server import Server

pytestmark = pytest.mark.browser


PROJECT = f"{XSS} audited"


def test_changes_appear_on_the_audit_page_and_its_filters_narrow_them(
        page: Any, browser_server: Server) -> None:
    server = browser_server
    post_ok(server, "/ingest/errors", error("browser-audit", exception_class="AuditError"))
    made = requests.post(server.base + "/setup", data={"project": PROJECT}, timeout=10,
                         headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert made.status_code == 200
    group = server.query("SELECT id FROM error_groups WHERE fingerprint = 'browser-audit'")[0][0]
    page.goto(f"{server.base}/projects/acme/errors/{group}")
    page.click("button.action-resolved")
    page.wait_for_load_state()
    page.click("nav.account a[href='/audit']")
    page.wait_for_load_state()
    top = page.locator("table.audit tr.entry").first
    assert top.get_attribute("data-action") == "group.resolve"
    assert "admin token" in top.locator(".actor").inner_text()
    assert top.locator(".target a").inner_text() == f"#{group}"
    assert page.locator(f"table.audit .target:has-text('{PROJECT}')").count() == 2  # as text

    page.select_option("select[name=action]", "project.create")
    page.select_option("select[name=project]", PROJECT)
    page.click(".audit-filter button[type=submit]")
    page.wait_for_load_state()
    entries = page.locator("table.audit tr.entry")
    assert entries.count() == 1 and entries.first.get_attribute("data-action") == \
        "project.create"
    page.goto(server.base + "/audit")
    page.locator("table.audit tr.entry .actor a").first.click()
    page.wait_for_load_state()
    assert page.locator("input[name=actor]").input_value() == "admin token"
    assert "actor=admin+token" in page.url
