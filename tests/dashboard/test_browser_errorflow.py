"""The error list's search and bulk resolve in Chromium: type in the search box,
tick every listed group with the header box, Resolve; the groups move to Resolved
and each group page says who resolved it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.dashboard.data import error, post_ok
from tests.support.server import Server

pytestmark = pytest.mark.browser


def test_search_then_bulk_resolve(page: Any, browser_server: Server) -> None:
    post_ok(browser_server, "/ingest/errors/batch", {"errors": [
        error("flow-a", exception_class="PaymentTimeout", message="gateway slow"),
        error("flow-b", exception_class="PaymentDeclined", message="card refused"),
        error("flow-c", exception_class="UnrelatedError", message="payment page ok")]})
    page.goto(browser_server.base + "/projects/acme/errors")
    page.fill("#search", "paymentt")
    page.click("#apply-filters")
    page.wait_for_load_state()
    assert page.locator("tr.group .exception-class").all_inner_texts() == ["PaymentTimeout"]
    page.fill("#search", "PAYMENT")  # class or message, any case
    page.click("#apply-filters")
    page.wait_for_load_state()
    assert sorted(page.locator("tr.group .exception-class").all_inner_texts()) == [
        "PaymentDeclined", "PaymentTimeout", "UnrelatedError"]
    page.check("#pick-all")
    page.uncheck('tr.group:has-text("UnrelatedError") input[name="group"]')
    page.click("button.bulk-resolved")
    page.wait_for_load_state()
    assert "q=PAYMENT" in page.url  # back to the same search
    assert page.locator("tr.group .exception-class").all_inner_texts() == ["UnrelatedError"]
    page.goto(browser_server.base + "/projects/acme/errors?status=resolved&q=payment")
    assert sorted(page.locator("tr.group .exception-class").all_inner_texts()) == [
        "PaymentDeclined", "PaymentTimeout"]
    page.locator("tr.group a.title", has_text="PaymentDeclined").click()
    page.wait_for_load_state()
    assert page.locator("#group-status").inner_text() == "Resolved"
    assert "by admin token" in page.locator("ol.history").inner_text()
