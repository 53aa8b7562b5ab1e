"""The dashboard in a real browser (Debian's Chromium driven by Playwright), on
data sent through the real ingest endpoints."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.dashboard.data import (
    XSS,
    checkout_trace,
    error,
    iso,
    log_record,
    logs_body,
    post_ok,
    post_requests,
    requests_between,
)
from tests.support.server import Server

pytestmark = pytest.mark.browser


def ms(text: str) -> float:
    """'49.9 ms' -> 49.9"""
    number, unit = text.split()
    assert unit == "ms", text
    return float(number)


def test_unauthenticated_visit_lands_on_the_login_page(browser: Any,
                                                       browser_server: Server) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(browser_server.base + "/projects/acme/performance")
    assert page.url.startswith(browser_server.base + "/login")
    assert page.locator("#token").is_visible()
    context.close()


def test_error_group_with_count_first_and_last_seen(page: Any, browser_server: Server) -> None:
    post_ok(browser_server, "/ingest/errors/batch", {"errors": [
        error("b-count", exception_class="CountError", timestamp="2026-11-21T08:00:00Z"),
        error("b-count", exception_class="CountError", timestamp="2026-11-21T09:30:00Z"),
        error("b-count", exception_class="CountError", timestamp="2026-11-21T09:00:00Z")]})
    page.goto(browser_server.base + "/projects/acme/errors?status=open")
    row = page.locator("tr.group", has=page.locator(".exception-class",
                                                    has_text="CountError"))
    assert row.locator(".count").inner_text() == "3"
    assert "2026-11-21 08:00:00" in row.locator(".first-seen").inner_text()
    assert "2026-11-21 09:30:00" in row.locator(".last-seen").inner_text()


def test_source_context_with_the_failing_line_highlighted(page: Any,
                                                          browser_server: Server) -> None:
    post_ok(browser_server, "/ingest/errors", error("b-source", exception_class="SourceError"))
    page.goto(browser_server.base + "/projects/acme/errors")
    page.locator("tr.group a.title", has_text="SourceError").click()
    page.wait_for_load_state()
    failing = page.locator("table.source tr.failing")
    assert failing.locator(".lineno").inner_text() == "42"
    assert failing.locator("code").inner_text() == "    return subtotal / count"
    assert page.locator(".source-file").inner_text() == "app/billing.py"
    # Highlighted: the failing line looks different from its neighbours.
    style = "e => getComputedStyle(e).backgroundColor + ' ' + getComputedStyle(e).fontWeight"
    neighbour = page.locator("table.source tr").first.locator("td").last
    assert failing.locator("td").last.evaluate(style) != neighbour.evaluate(style)


def test_resolve_then_recurrence_reopens(page: Any, browser_server: Server) -> None:
    post_ok(browser_server, "/ingest/errors", error("b-reopen", exception_class="ReopenError"))
    page.goto(browser_server.base + "/projects/acme/errors")
    page.locator("tr.group a.title", has_text="ReopenError").click()
    page.wait_for_load_state()
    group_url = page.url
    page.locator("button.action-resolved").click()
    page.wait_for_load_state()
    assert page.locator("#group-status").inner_text() == "Resolved"
    time.sleep(0.01)  # the next occurrence is after the resolution
    post_ok(browser_server, "/ingest/errors", error("b-reopen", exception_class="ReopenError",
                                                 timestamp=iso(time.time() + 1)))
    page.goto(group_url)
    assert page.locator("#group-status").inner_text() == "Open"
    assert page.locator(".badge.reopened").is_visible()
    assert "Resolved" in page.locator("ol.history").inner_text()


def test_ignored_group_leaves_the_list(page: Any, browser_server: Server) -> None:
    post_ok(browser_server, "/ingest/errors", error("b-ignore", exception_class="IgnoreMeError"))
    page.goto(browser_server.base + "/projects/acme/errors")
    page.locator("tr.group a.title", has_text="IgnoreMeError").click()
    page.wait_for_load_state()
    page.locator("button.action-ignored").click()
    page.wait_for_load_state()
    page.goto(browser_server.base + "/projects/acme/errors")
    assert page.locator(".exception-class", has_text="IgnoreMeError").count() == 0
    page.goto(browser_server.base + "/projects/acme/errors?status=ignored")
    assert page.locator(".exception-class", has_text="IgnoreMeError").count() == 1


def test_deploy_markers_and_before_after_figures(page: Any, browser_server: Server) -> None:
    now = time.time()
    # On a minute boundary, so that no rollup minute mixes before and after.
    deploy_at = (now - 3600) // 60 * 60
    items = requests_between(now - 7200, deploy_at, 10, 50.0, service="perf", env="prod")
    items += requests_between(deploy_at, now - 120, 10, 200.0, error_every=4, service="perf",
                              env="prod")
    post_requests(browser_server, items)
    post_ok(browser_server, "/ingest/deploys", {
        "git_sha": "c0ffee1234567890", "version": "9.9.9", "env": "prod", "deployer": "ann",
        "description": "Slower on purpose", "timestamp": iso(deploy_at)})
    page.goto(browser_server.base + "/projects/acme/performance?service=perf&env=prod&range=24h")
    marker = page.locator("#chart-latency .deploy-marker[data-sha='c0ffee1234567890']")
    marker.wait_for()
    marker.hover()
    tip = page.locator(".deploy-tip")
    tip.wait_for()
    assert "c0ffee123456" in tip.inner_text() and "ann" in tip.inner_text()
    # The range named: the default follows the newest data of the shared collector.
    page.goto(browser_server.base + "/projects/acme/deploys?env=prod&range=24h")
    deploy = page.locator("section.deploy[data-sha='c0ffee1234567890']")
    assert "worse" in (deploy.get_attribute("class") or "")
    assert ms(deploy.locator(".metric-p50 .before").inner_text()) == pytest.approx(50, rel=0.02)
    assert ms(deploy.locator(".metric-p50 .after").inner_text()) == pytest.approx(200, rel=0.02)
    assert deploy.locator(".metric-error-rate .before").inner_text() == "0.0%"
    after = deploy.locator(".metric-error-rate .after").inner_text()  # every 4th failed
    assert float(after.rstrip("%")) == pytest.approx(25, abs=0.5)


def test_trace_waterfall(page: Any, browser_server: Server) -> None:
    trace_id, body = checkout_trace()
    post_ok(browser_server, "/ingest/v1/traces", body)
    page.goto(browser_server.base + "/projects/acme/traces?range=1h")
    page.locator(f"a[href$='/traces/{trace_id}']").first.click()
    page.wait_for_load_state()
    spans = page.locator(".waterfall .span")
    assert spans.count() == 6
    names = [n.strip() for n in page.locator(".waterfall .span-name").all_inner_texts()]
    assert names[0] == "GET /checkout" and "compute tax" in names
    depth = {n: page.locator(".wf-name", has_text=n).first.get_attribute("data-depth")
             for n in ("GET /checkout", "POST payments", "compute tax")}
    assert depth == {"GET /checkout": "0", "POST payments": "1", "compute tax": "2"}
    assert page.locator(".waterfall .wf-name .cat-database").count() == 1


def test_xss_payload_shows_as_text(page: Any, browser_server: Server) -> None:
    post_ok(browser_server, "/ingest/errors", error("b-xss", exception_class="XssError",
                                                 message=XSS, params={"q": XSS}))
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    page.goto(browser_server.base + "/projects/acme/errors")
    row = page.locator("tr.group", has=page.locator(".exception-class", has_text="XssError"))
    assert row.locator(".message").inner_text() == XSS
    row.locator("a.title").click()
    page.wait_for_load_state()
    assert page.locator("p.message").first.inner_text() == XSS
    assert alerts == []


def test_logs_page_filters_and_live_tail(page: Any, browser_server: Server) -> None:
    now = time.time_ns()
    post_ok(browser_server, "/ingest/v1/logs", logs_body([
        log_record("tail-test booted", now - 30 * 10**9, 9, "INFO", **{"tenant": "a"}),
        log_record("tail-test disk almost full", now - 20 * 10**9, 13, "WARN",
                   **{"tenant": "b"}),
        log_record(XSS, now - 10 * 10**9, 17, "ERROR", **{"tenant": "a"}),
    ], service="tailsvc"))
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    page.goto(browser_server.base + "/projects/acme/logs?range=1h")
    page.locator("header nav.sections a.current", has_text="Logs").wait_for()
    # The form: service, severity at least WARN, an attribute.
    page.fill("input[name=service]", "tailsvc")
    page.select_option("select[name=severity]", "WARN")
    page.locator("button", has_text="Search").click()
    page.wait_for_load_state()
    bodies = page.locator("#log-list details.log .log-body").all_inner_texts()
    assert bodies == [XSS, "tail-test disk almost full"]  # newest first, shown as text
    assert page.locator(".log-count").inner_text().startswith("1–2 of 2")
    page.locator("input[name=attr]").first.fill("tenant=a")
    page.locator("button", has_text="Search").click()
    page.wait_for_load_state()
    assert page.locator("#log-list .log-body").all_inner_texts() == [XSS]
    page.locator("#log-list details.log summary").first.click()
    assert "tenant" in page.locator("#log-list .log-details").first.inner_text()

    # The live tail: a record sent after the page opened appears on top; none while paused.
    page.goto(browser_server.base + "/projects/acme/logs?service=tailsvc")
    page.locator(".tail-toggle").click()
    page.locator(".tail[data-state=running]").wait_for()
    post_ok(browser_server, "/ingest/v1/logs", logs_body([
        log_record("tail-test arrived " + XSS, time.time_ns(), 17, "ERROR"),
        log_record("tail-test another service", time.time_ns(), 17, "ERROR")],
        service="tailsvc"))
    added = page.locator("#log-list details.log.tail-added")
    added.first.wait_for(timeout=15_000)
    page.wait_for_function("document.querySelectorAll('#log-list .tail-added').length == 2")
    tops = page.locator("#log-list .log-body").all_inner_texts()
    assert set(tops[:2]) == {"tail-test arrived " + XSS, "tail-test another service"}
    assert "+2 new" in page.locator(".tail-new").inner_text()
    page.locator(".tail-toggle").click()  # pause
    page.locator(".tail[data-state=paused]").wait_for()
    post_ok(browser_server, "/ingest/v1/logs", logs_body([
        log_record("tail-test while paused", time.time_ns(), 9)], service="tailsvc"))
    page.wait_for_timeout(3000)  # longer than a poll: nothing is fetched while paused
    assert page.locator("#log-list .tail-added").count() == 2
    page.locator(".tail-toggle").click()  # resume: what came meanwhile follows
    page.locator("#log-list .log-body", has_text="tail-test while paused").wait_for(
        timeout=15_000)
    assert alerts == []
