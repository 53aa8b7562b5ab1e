"""The Metrics page in a real browser (Debian's Chromium driven by Playwright): pick a
metric, see its chart and legend, group it by an attribute."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest

from tests.dashboard.data import XSS
from tests.dashboard.metric_data import RANGE, point, write_metrics
from tests.support.server import Server

pytestmark = pytest.mark.browser


def test_pick_a_metric_then_group_it(page: Any, browser_server: Server) -> None:
    write_metrics(browser_server, *(
        point("shop.orders", 60 * m + 30, value=m + 1, attributes={"region": region})
        for m in range(5) for region in ("eu", "us", XSS)))
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{browser_server.base}/projects/acme/metrics?{urlencode(RANGE)}")
    row = page.locator("tr.metric[data-name='shop.orders']")
    assert row.locator(".kind").inner_text() == "sum"
    assert row.locator(".metric-services").inner_text() == "web"
    row.locator("a.metric-name").click()
    page.wait_for_load_state()
    page.locator("#chart-metric[data-ready=true]").wait_for()
    assert page.locator("#chart-metric canvas").count() == 1
    legend = page.locator("#chart-metric .u-legend")
    assert "shop.orders (sum)" in legend.inner_text()
    # Counters offer sum and rate only.
    assert page.locator("#metric-agg option").all_inner_texts() == ["sum", "rate"]
    page.select_option("#metric-group-by", "region")
    page.select_option("#metric-agg", "rate")
    page.locator(".metric-form button[type=submit]").click()
    page.wait_for_load_state()
    page.locator("#chart-metric[data-ready=true]").wait_for()
    labels = page.locator("#chart-metric .u-legend .u-series .u-label").all_inner_texts()
    assert {"region=eu", "region=us", f"region={XSS}"} <= set(labels)
    assert "group_by=region" in page.url and "agg=rate" in page.url
    assert dialogs == []  # the attribute value was drawn as text, never run
