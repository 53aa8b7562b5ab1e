"""Releases, environments, tags and per-frame source in a real browser (Debian's
Chromium driven by Playwright), on a Sentry event sent through the real door:
the group page draws the tag distribution and each frame's source context, and the
error list's filters narrow the list."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.dashboard.conftest import login
from tests.dashboard.data import XSS, error, post_ok
from tests.dashboard.sentry_data import post_event, sentry_event, start_dash_sentry
from tests.receiver.sentry.helpers import KEY
from tests.support.server import Server

# Long (tests/conftest.py): ~25 s alone.
pytestmark = [pytest.mark.browser, pytest.mark.long]


@pytest.fixture
def sentry(start: Callable[..., Server], sqlite_url: str) -> Server:
    return start_dash_sentry(start, sqlite_url)


@pytest.fixture
def tab(browser: Any, sentry: Server) -> Iterator[Any]:
    """A logged-in page on the `sentry` collector; JavaScript errors and dialogs
    (an alert would be an escape missed) fail the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("dialog", lambda dialog: (problems.append(dialog.message), dialog.dismiss()))
    login(page, sentry.base)
    yield page
    context.close()
    assert problems == []


def test_group_page_frames_with_source_and_the_tag_distribution(tab: Any,
                                                                 sentry: Server) -> None:
    post_event(sentry, sentry_event())
    post_event(sentry, sentry_event(tags={"browser": "Chrome 131"}))
    event = sentry_event(tags={"browser": XSS})
    event["breadcrumbs"]["values"][0]["message"] = XSS
    post_event(sentry, event)
    tab.goto(sentry.base + "/projects/acme/errors")
    tab.locator("tr.group a.title", has_text="LookupError").click()
    tab.wait_for_load_state()

    browser_facet = tab.locator(".facet[data-facet=browser]")
    values = browser_facet.locator(".facet-value .value").all_inner_texts()
    assert sorted(values) == sorted(["Firefox 128", "Chrome 131", XSS])
    assert browser_facet.locator(".share").all_inner_texts() == ["33.3%"] * 3
    assert tab.locator(".first-release").inner_text() == "shop@2.4.0"

    raised = tab.locator(".chained-exception").last
    assert raised.locator(".exception-type").inner_text() == "LookupError"
    inner = raised.locator(".frame").first  # innermost first
    assert inner.locator(".frame-function").inner_text() == "load_order"
    failing = inner.locator("table.source tr.failing")
    assert failing.locator(".lineno").inner_text() == "17"
    assert "raise LookupError" in failing.locator("code").inner_text()
    assert inner.locator("table.source .lineno").all_inner_texts() == ["14", "15", "16", "17"]
    # The library frame is folded away until asked for.
    library = raised.locator("details.frame-run")
    assert not library.locator(".frame").is_visible()
    library.locator("summary").click()
    assert library.locator(".frame-function").inner_text() == "dispatch"
    assert XSS in tab.locator(".breadcrumbs").inner_text()


def test_the_filters_narrow_the_list(tab: Any, sentry: Server) -> None:
    post_ok(sentry, "/ingest/errors/batch", {"errors": [
        error("f-prod", exception_class="ProdError", environment="prod", release="1.0"),
        error("f-staging", exception_class="StagingError", environment="staging",
              release="1.1")]}, key=KEY)
    tab.goto(sentry.base + "/projects/acme/errors")
    shown = tab.locator("tr.group .exception-class")
    assert sorted(shown.all_inner_texts()) == ["ProdError", "StagingError"]
    tab.select_option("#filter-environment", "staging")
    tab.click("#apply-filters")
    tab.wait_for_load_state()
    assert "environment=staging" in tab.url
    assert shown.all_inner_texts() == ["StagingError"]
    # Switching the sort keeps the filter.
    tab.locator(".sort a", has_text="events").click()
    tab.wait_for_load_state()
    assert shown.all_inner_texts() == ["StagingError"]
    assert tab.locator("#filter-environment").input_value() == "staging"
    tab.locator("a.clear-filters").click()
    tab.wait_for_load_state()
    assert sorted(shown.all_inner_texts()) == ["ProdError", "StagingError"]
