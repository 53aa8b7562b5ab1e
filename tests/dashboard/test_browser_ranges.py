"""In Chromium: the range the server chose goes into the address bar; the deploy
tooltip stays by its marker, and inside the chart, near either edge
(dashboard/static/app.js placeTip), measured with bounding boxes."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.dashboard.data import iso, post_ok, post_requests, requests_between
from tests.support.server import Server

pytestmark = pytest.mark.browser
NEAR = 16  # px between the tooltip and its marker's line, at most


def box(locator: Any) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None
    return found


@pytest.mark.parametrize(("sha", "ago_s"), [("edge0right", 3 * 60), ("edge0left", 57 * 60)])
def test_the_tooltip_sits_by_its_marker_inside_the_chart(page: Any, browser_server: Server,
                                                          sha: str, ago_s: int) -> None:
    now = time.time()
    post_requests(browser_server, requests_between(now - 3600, now, 2, 20.0, service="tip",
                                                env="tip"))
    post_ok(browser_server, "/ingest/deploys", {"git_sha": sha, "env": "tip", "deployer": "ann",
                                             "timestamp": iso(now - ago_s)})
    page.goto(browser_server.base + "/projects/acme/performance?service=tip&env=tip&range=1h")
    chart = page.locator("#chart-latency")
    marker = chart.locator(f".deploy-marker[data-sha='{sha}']")
    marker.wait_for()
    marker.hover()
    tip = page.locator(".deploy-tip")
    tip.wait_for()
    m, t, c = box(marker), box(tip), box(chart)
    line = m["x"] + m["width"] / 2
    gap = t["x"] - line if t["x"] >= line else line - (t["x"] + t["width"])
    assert 0 <= gap <= NEAR, (m, t)
    assert c["x"] <= t["x"] and t["x"] + t["width"] <= c["x"] + c["width"], (c, t)
    # Near the right edge it opens to the left of the marker, near the left to the right.
    assert (t["x"] < line) == (sha == "edge0right")


def test_a_chosen_range_goes_into_the_address_bar_and_a_pick_is_remembered(
        page: Any, browser_server: Server) -> None:
    post_ok(browser_server, "/ingest/deploys", {"git_sha": "fresh0range", "env": "fresh",
                                             "timestamp": iso(time.time() - 60)})
    page.goto(browser_server.base + "/projects/acme/deploys?env=fresh")
    assert page.url == browser_server.base + "/projects/acme/deploys?env=fresh&range=1h"
    page.locator(".range-preset", has_text="30 days").click()
    page.wait_for_load_state()
    assert re.search(r"[?&]range=30d", page.url)
    page.goto(browser_server.base + "/projects/acme/deploys?env=fresh")
    assert page.url.endswith("range=30d")
    assert page.locator(".range-preset.current").inner_text() == "30 days"
