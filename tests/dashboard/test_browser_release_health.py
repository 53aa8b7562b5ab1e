"""The Releases, release and Feedback pages in a real browser (Debian's Chromium driven
by Playwright), on sessions and feedback sent through the real Sentry door with a
hostile release name and message: the tables show the figures, the release's chart is
drawn, a deploy of the release shows its crash-free figures, and nothing sent runs
(a dialog or a page error fails the test)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.dashboard.conftest import login
from tests.dashboard.data import XSS, post_ok
from tests.dashboard.sentry_data import post_event, sentry_event, start_dash_sentry
from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import post_envelope
from tests.support.server import Server

pytestmark = pytest.mark.browser
RELEASE = "shop@1.0" + XSS


@pytest.fixture
def sentry(start: Callable[..., Server], sqlite_url: str) -> Server:
    return start_dash_sentry(start, sqlite_url)


@pytest.fixture
def tab(browser: Any, sentry: Server) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("dialog", lambda dialog: (problems.append(dialog.message), dialog.dismiss()))
    login(page, sentry.base)
    yield page
    context.close()
    assert problems == []


def test_releases_and_feedback_pages(tab: Any, sentry: Server) -> None:
    minute = int(time.time() // 60 * 60 - 120)
    started = time.strftime("%Y-%m-%dT%H:%M:00Z", time.gmtime(minute))
    post_ok(sentry, "/ingest/deploys", {"git_sha": "abc1234", "version": RELEASE,
                                        "env": "prod", "timestamp": started})
    aggregates = {"attrs": {"release": RELEASE, "environment": "prod"},
                  "aggregates": [{"started": started, "exited": 8, "crashed": 2}]}
    assert post_envelope(sentry, envelope({}, [item("sessions", aggregates)])
                         ).status_code == 200
    event = sentry_event()
    post_event(sentry, event)
    said = {"event_id": "f" * 32, "contexts": {"feedback": {
        "message": "Paying fails " + XSS, "name": XSS, "associated_event_id": event["event_id"]}}}
    assert post_envelope(sentry, envelope({}, [item("feedback", said)])).status_code == 200

    tab.goto(sentry.base + "/projects/acme/releases")
    row = tab.locator("tr.release-row")
    assert row.locator("a.release").inner_text() == RELEASE
    assert row.locator(".crash-free-sessions").inner_text() == "80.0%"
    assert row.locator(".sessions").inner_text() == "10"
    row.locator("a.release").click()
    tab.wait_for_selector("#chart-sessions[data-ready='true']")
    assert tab.locator("h1 code.release").inner_text() == RELEASE
    assert tab.locator(".release-total .crash-free-sessions").inner_text() == "80.0%"
    assert tab.locator("#chart-sessions .deploy-marker").count() == 1

    tab.goto(sentry.base + "/projects/acme/deploys?range=24h")
    health = tab.locator(".release-health")
    assert health.locator(".crash-free-sessions").inner_text() == "80.0%"
    assert health.locator("a.release").inner_text() == RELEASE

    tab.goto(sentry.base + "/projects/acme/feedback")
    assert tab.locator(".feedback-message").inner_text() == "Paying fails " + XSS
    assert tab.locator(".feedback-name").inner_text() == XSS
    tab.locator("a.feedback-group").click()
    assert tab.locator("#feedback .feedback-message").inner_text() == "Paying fails " + XSS
    assert json.dumps(XSS) not in tab.content()  # shown as text, never as markup
