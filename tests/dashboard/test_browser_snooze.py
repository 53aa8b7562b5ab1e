"""Snooze in Chromium, against the real server, with errors sent through the real
ingest API: a group snoozed from its page opens again after that many more events
(and its history says why); two groups bulk-snoozed for an hour show when that hour
ends; a bad value is shown on the page and changes nothing; a snoozed group's events
are still stored and counted."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.dashboard.data import error, post_ok
from tests.support.server import Server

pytestmark = pytest.mark.browser
SNOOZED_UNTIL = "snoozed until "


def classes(page: Any) -> list[str]:
    return sorted(page.locator("tr.group .exception-class").all_inner_texts())


def open_list(page: Any, server: Server, search: str, status: str = "open") -> None:
    page.goto(f"{server.base}/projects/acme/errors?status={status}&q={search}")


def send(server: Server, fingerprint: str, cls: str, n: int = 1) -> None:
    for _ in range(n):
        post_ok(server, "/ingest/errors", error(fingerprint, exception_class=cls))


def test_snooze_until_3_more_events_then_it_opens_again(page: Any,
                                                        browser_server: Server) -> None:
    send(browser_server, "snz-three", "SnoozeThree")
    open_list(page, browser_server, "snoozethree")
    page.locator("tr.group a.title", has_text="SnoozeThree").click()
    page.wait_for_load_state()
    page.fill("#snooze-events", "3")
    page.click("button.action-snooze")
    page.wait_for_load_state()
    assert page.locator("#group-status").inner_text() == "Ignored"
    assert page.locator("dd.snoozed").inner_text() == "4 events in all"
    # The list's Ignored tab shows it, marked snoozed; the Open tab does not.
    open_list(page, browser_server, "snoozethree")
    assert classes(page) == []
    page.click("a.tab.status-ignored")
    page.wait_for_load_state()
    assert classes(page) == ["SnoozeThree"]
    assert page.locator("tr.group .badge.snoozed").inner_text() == \
        SNOOZED_UNTIL + "4 events in all"
    send(browser_server, "snz-three", "SnoozeThree", 2)
    page.reload()
    assert classes(page) == ["SnoozeThree"]  # two more: still snoozed
    send(browser_server, "snz-three", "SnoozeThree")
    page.reload()
    assert classes(page) == []
    open_list(page, browser_server, "snoozethree")
    assert classes(page) == ["SnoozeThree"]
    assert page.locator("tr.group .badge.snoozed").count() == 0
    page.locator("tr.group a.title", has_text="SnoozeThree").click()
    page.wait_for_load_state()
    assert page.locator("#group-status").inner_text() == "Open"
    assert page.locator("dd.snoozed").count() == 0
    history = page.locator("ol.history li").all_inner_texts()
    assert history[0].startswith("Open from ignored — the snooze ended,")
    assert "by admin token" in history[1]


def test_bulk_snooze_two_groups_for_an_hour(page: Any, browser_server: Server) -> None:
    post_ok(browser_server, "/ingest/errors/batch", {"errors": [
        error("snz-hour-a", exception_class="HourlyA"),
        error("snz-hour-b", exception_class="HourlyB"),
        error("snz-hour-c", exception_class="HourlyKeep")]})
    open_list(page, browser_server, "hourly")
    assert classes(page) == ["HourlyA", "HourlyB", "HourlyKeep"]
    page.check("#pick-all")
    page.uncheck('tr.group:has-text("HourlyKeep") input[name="group"]')
    page.fill("#bulk-snooze-hours", "1")
    before = int(time.time())
    page.click("button.bulk-snooze-button")
    page.wait_for_load_state()
    after = int(time.time()) + 1
    assert "q=hourly" in page.url  # back to the same search
    assert classes(page) == ["HourlyKeep"]
    page.click("a.tab.status-ignored")
    page.wait_for_load_state()
    assert classes(page) == ["HourlyA", "HourlyB"]
    marks = page.locator("tr.group .badge.snoozed").all_inner_texts()
    assert len(marks) == 2 and marks[0] == marks[1]
    assert marks[0].startswith(SNOOZED_UNTIL) and marks[0].endswith(" UTC")
    ends = datetime.fromisoformat(marks[0][len(SNOOZED_UNTIL):-len(" UTC")])
    assert before + 3600 <= ends.replace(tzinfo=UTC).timestamp() <= after + 3600
    page.locator("tr.group a.title", has_text="HourlyB").click()
    page.wait_for_load_state()
    assert page.locator("#group-status").inner_text() == "Ignored"
    assert page.locator("dd.snoozed").inner_text() == marks[0][len(SNOOZED_UNTIL):]
    assert "by admin token" in page.locator("ol.history").inner_text()


def test_a_time_in_the_past_is_shown_on_the_page_and_changes_nothing(
        page: Any, browser_server: Server) -> None:
    send(browser_server, "snz-past", "PastSnooze")
    open_list(page, browser_server, "pastsnooze")
    page.check("#pick-all")
    page.fill("#bulk-snooze-until", "2020-01-01T00:00")
    with page.expect_response(lambda r: r.url.endswith("/bulk-status")) as answer:
        page.click("button.bulk-snooze-button")
    assert answer.value.status == 400
    problem = page.locator("p.problem").inner_text()
    assert "'snooze_until' is in the past (2020-01-01 00:00:00 UTC" in problem
    open_list(page, browser_server, "pastsnooze")
    assert classes(page) == ["PastSnooze"]


def test_a_snoozed_groups_events_are_stored_and_counted(page: Any,
                                                        browser_server: Server) -> None:
    send(browser_server, "snz-count", "CountedWhileSnoozed")
    open_list(page, browser_server, "countedwhile")
    page.locator("tr.group a.title", has_text="CountedWhileSnoozed").click()
    page.wait_for_load_state()
    page.fill("#snooze-per-hour", "1000")
    page.click("button.action-snooze")
    page.wait_for_load_state()
    send(browser_server, "snz-count", "CountedWhileSnoozed", 5)
    page.reload()
    assert page.locator("#group-status").inner_text() == "Ignored"
    assert page.locator("dd.count").inner_text() == "6"
    assert page.locator("table.occurrences tbody tr").count() == 6
    open_list(page, browser_server, "countedwhile", status="ignored")
    assert classes(page) == ["CountedWhileSnoozed"]
    assert page.locator("tr.group td.count").inner_text() == "6"
