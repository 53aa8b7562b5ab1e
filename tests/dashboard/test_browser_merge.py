"""Merging error groups in Chromium: tick two groups, Merge; the list shows one with
the summed count; on its page, Unmerge; the list shows both again, each with its
own count."""

from __future__ import annotations

from typing import Any

import pytest

from tests.dashboard.data import error, post_ok
from tests.support.server import Server

pytestmark = pytest.mark.browser


def listed(page: Any) -> dict[str, str]:
    rows = page.locator("tr.group")
    return {rows.nth(i).locator(".exception-class").inner_text():
            rows.nth(i).locator("td.count").inner_text() for i in range(rows.count())}


def test_merge_then_unmerge(page: Any, browser_server: Server) -> None:
    post_ok(browser_server, "/ingest/errors/batch", {"errors": [
        *[error("merge-a", exception_class="MergeTimeout", message="gateway slow")] * 3,
        *[error("merge-b", exception_class="MergeDeclined", message="card refused")] * 2]})
    page.goto(browser_server.base + "/projects/acme/errors?q=merge")
    assert listed(page) == {"MergeTimeout": "3", "MergeDeclined": "2"}
    page.check('tr.group:has-text("MergeTimeout") input[name="group"]')
    page.check('tr.group:has-text("MergeDeclined") input[name="group"]')
    page.click("button.bulk-merge")
    page.wait_for_load_state()
    assert "q=merge" in page.url  # back to the same search
    assert listed(page) == {"MergeTimeout": "5"}  # the one with the most events
    page.locator("tr.group a.title", has_text="MergeTimeout").click()
    page.wait_for_load_state()
    assert page.locator("dd.count").inner_text() == "5"
    merged = page.locator("table.merged-groups tbody tr")
    assert merged.count() == 1 and "MergeDeclined" in merged.inner_text()
    assert "into this by admin token" in page.locator("ol.history").inner_text()
    merged.locator("button.action-unmerge").click()
    page.wait_for_load_state()
    assert page.locator("dd.count").inner_text() == "3"
    assert page.locator("table.merged-groups").count() == 0
    assert "unmerged #" in page.locator("ol.history").inner_text()
    page.goto(browser_server.base + "/projects/acme/errors?q=merge")
    assert listed(page) == {"MergeTimeout": "3", "MergeDeclined": "2"}
