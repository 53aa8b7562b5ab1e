"""The Traces and Trace pages in a real browser (Debian's Chromium driven by
Playwright), on traces sent through the real ingest endpoint."""

from __future__ import annotations

from typing import Any

import pytest

from tests.dashboard.data import checkout_trace, post_ok
from tests.dashboard.trace_data import STACK, two_service_trace
from tests.support.server import Server

pytestmark = pytest.mark.browser


def open_trace(page: Any, server: Server, trace_id: str, query: str = "") -> None:
    page.goto(f"{server.base}/projects/acme/traces/{trace_id}{query}")
    page.wait_for_load_state()


def test_search_then_a_scatter_dot_opens_its_trace(page: Any, browser_server: Server) -> None:
    trace_id, body = checkout_trace(service="scatter")
    post_ok(browser_server, "/ingest/v1/traces", body)
    page.goto(browser_server.base + "/projects/acme/traces?range=1h")
    page.fill("input[name=service]", "scatter")
    page.fill("input[name=q]", "http.route=/checkout duration>100ms")
    page.click(".trace-search button[type=submit]")
    page.wait_for_load_state()
    assert "q=http.route%3D%2Fcheckout+duration%3E100ms" in page.url
    assert page.locator(".trace-total").inner_text().startswith("1–1 of 1")
    dot = page.locator(f".trace-scatter circle[data-trace-id='{trace_id}']")
    assert dot.count() == 1
    dot.click()
    page.wait_for_url(f"**/traces/{trace_id}")
    assert page.locator("code.trace-id").inner_text() == trace_id
    assert page.locator(".waterfall .span").count() == 6


def test_unknown_trace_id_in_the_header_box_says_so(page: Any, browser_server: Server) -> None:
    page.goto(browser_server.base + "/projects/acme/traces")
    page.fill(".trace-lookup input[name=id]", "ab" * 16)
    page.press(".trace-lookup input[name=id]", "Enter")
    page.wait_for_load_state()
    assert f"no trace {'ab' * 16}" in page.content()


def test_collapse_a_subtree_and_keep_it_in_the_url(page: Any, browser_server: Server) -> None:
    trace_id, ids, body = two_service_trace("c-front", "c-back")
    post_ok(browser_server, "/ingest/v1/traces", body)
    open_trace(page, browser_server, trace_id)
    visible = page.locator(".waterfall details.span:visible")
    assert visible.count() == 4
    page.click(f"details[data-span-id='{ids['call']}'] .wf-toggle")
    assert visible.count() == 2  # the call's handler and query are hidden
    assert f"collapsed={ids['call']}" in page.url
    assert page.locator(f"details[data-span-id='{ids['call']}']").get_attribute("open") is None
    page.reload()
    page.wait_for_load_state()
    assert visible.count() == 2  # the server reads the URL too
    page.click(f"details[data-span-id='{ids['call']}'] .wf-toggle")
    assert visible.count() == 4 and "collapsed" not in page.url
    # The span opened last is in the URL too.
    page.click(f"details[data-span-id='{ids['query']}'] summary .span-name")
    page.wait_for_function("location.search.includes('span=')")
    assert f"span={ids['query']}" in page.url
    page.reload()
    page.wait_for_load_state()
    assert page.locator(f"details[data-span-id='{ids['query']}']").get_attribute("open") == ""
    page.click(f"details[data-span-id='{ids['query']}'] summary .span-name")
    page.wait_for_function("!location.search.includes('span=')")


def test_service_legend_colours_kinds_and_the_problem_marker(page: Any, browser_server: Server
                                                             ) -> None:
    trace_id, ids, body = two_service_trace("l-front", "l-back")
    post_ok(browser_server, "/ingest/v1/traces", body)
    open_trace(page, browser_server, trace_id)
    legend = page.locator(".service-legend .legend-item")
    assert legend.locator(".legend-name").all_inner_texts() == ["l-front", "l-back"]
    swatches = [legend.nth(i).locator(".swatch").get_attribute("class") for i in range(2)]
    assert swatches == ["swatch svc-0", "swatch svc-1"]
    bar = page.locator(f"details[data-span-id='{ids['query']}'] .wf-bar")
    assert "svc-1" in (bar.get_attribute("class") or "")
    assert page.locator(".service-legend details.resource").count() == 2
    legend.nth(1).locator("details.resource summary").click()
    assert "l-back-1" in legend.nth(1).locator("table.attributes").inner_text()
    problems = page.locator("details.span.has-problem")
    assert problems.count() == 1
    assert problems.get_attribute("data-span-id") == ids["handler"]
    assert problems.locator(".wf-problem").is_visible()
    page.click(f"details[data-span-id='{ids['root']}'] summary .span-name")
    assert page.locator(f"details[data-span-id='{ids['root']}'] .span-kind").inner_text() \
        == "server"


def test_event_timeline_with_the_stack_trace_as_a_code_block(page: Any, browser_server: Server
                                                             ) -> None:
    trace_id, ids, body = two_service_trace("e-front", "e-back")
    post_ok(browser_server, "/ingest/v1/traces", body)
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    open_trace(page, browser_server, trace_id)
    handler = page.locator(f"details[data-span-id='{ids['handler']}']")
    handler.locator("summary .span-name").click()
    events = handler.locator(".span-event")
    assert events.locator(".event-name").all_inner_texts() == ["retrying", "exception"]
    assert events.locator(".event-time").all_inner_texts() == ["+30.0 ms", "+90.0 ms"]
    assert events.nth(1).locator(".exception-class").inner_text() == "CardDeclined"
    assert events.nth(1).locator(".message").inner_text() == "no <funds>"
    # the traceback parsed into frames; the text as printed behind its toggle
    assert events.nth(1).locator(".stack-frames .frame-function").all_inner_texts() == [
        "charge"]
    events.nth(1).locator("details.raw-trace summary").click()
    block = events.nth(1).locator("pre.stacktrace code")
    assert block.inner_text() == STACK  # lines kept, markup shown as text
    assert alerts == []
