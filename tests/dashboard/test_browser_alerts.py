"""The alerts page in a real browser (Debian's Chromium driven by Playwright): a
webhook added through the form is listed by its host only, a rule sends to it, a
test alert is recorded, and neither the page nor the browser's console shows a
credential."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.dashboard.conftest import login
from tests.dashboard.test_alert_settings import HOOK_SECRET, HOOK_URL, SECRETS, env
from tests.support.server import Server

pytestmark = pytest.mark.browser


@pytest.fixture
def tab(browser: Any, start: Callable[..., Server], sqlite_url: str
        ) -> Iterator[tuple[Any, Server]]:
    server = start(sqlite_url, env=env())
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    login(page, server.base)
    yield page, server
    context.close()
    assert problems == []


def test_add_a_webhook_a_rule_and_send_a_test_alert(tab: tuple[Any, Server]) -> None:
    page, server = tab
    page.goto(server.base + "/projects/acme/alerts")
    form = page.locator("#add-destination")
    form.locator("input[name=name]").fill("hook")
    form.locator("select[name=type]").select_option("webhook")
    form.locator("input[name=url]").fill(HOOK_URL)
    form.locator("input[name=secret]").fill(HOOK_SECRET)
    form.locator("button[type=submit]").click()
    page.wait_for_load_state()
    assert page.locator("#done").inner_text() == "Destination added."
    row = page.locator('tr.destination[data-name="hook"]')
    assert "http://127.0.0.1/…" in row.locator(".where").inner_text()

    rule = page.locator("#add-rule")
    rule.locator("select[name=on]").select_option("regression")
    rule.locator('input[name=destinations][value="hook"]').check()
    rule.locator("button[type=submit]").click()
    page.wait_for_load_state()
    assert page.locator("tr.rule .on").inner_text() == "regression"

    page.locator('tr.destination[data-name="hook"] button.send-test').click()
    page.wait_for_load_state()
    assert page.locator("#done").inner_text().startswith("Test alert recorded")
    assert page.locator("tr.fact.kind-test").count() == 1
    html = page.content()
    assert not any(secret in html for secret in SECRETS)
