"""The Tokens page in a real browser (Debian's Chromium driven by Playwright): the admin
token's holder makes a service token limited to one project, sees it once, uses it from
a script, finds its last use listed, and revokes it."""

from __future__ import annotations

import re
from typing import Any

import pytest
import requests

from tests.dashboard.data import error, post_ok
from tests.support.server import Server

pytestmark = pytest.mark.browser


def test_make_use_and_revoke_a_token(page: Any, browser_server: Server) -> None:
    post_ok(browser_server, "/ingest/errors/batch", {"errors": [error("browser-tokens")]})
    page.goto(browser_server.base + "/tokens")
    page.fill("input[name=name]", "nightly export")
    page.select_option("select[name=kind]", "service")
    page.check("input[name=project][value=acme]")
    page.fill("input[name=expires_days]", "7")
    page.click("#create-token")
    page.wait_for_load_state()
    secret = page.locator("#new-token").inner_text()
    assert re.fullmatch(r"snd_[A-Za-z0-9_-]{43}", secret)
    token_id = re.search(r"Token id (\d+)", page.content()).group(1)  # type: ignore[union-attr]
    row = page.locator(f"tr[data-token-id='{token_id}']")
    assert "service" in row.inner_text() and "acme" in row.inner_text()
    assert "never" in row.inner_text()  # not used yet

    headers = {"Authorization": f"Bearer {secret}"}
    read = requests.get(browser_server.base + "/api/v1/projects/acme/error-groups",
                        headers=headers, timeout=10)
    assert read.status_code == 200 and read.json()["items"]
    page.goto(browser_server.base + "/tokens")
    assert secret not in page.content()  # shown once
    row = page.locator(f"tr[data-token-id='{token_id}']")
    assert "just now" in row.inner_text() and "active" in row.inner_text()

    row.locator("button", has_text="Revoke").click()
    page.wait_for_load_state()
    assert page.locator(".done").inner_text() == "Token revoked."
    assert page.locator(f"tr[data-token-id='{token_id}'] .state").inner_text() == "revoked"
    assert requests.get(browser_server.base + "/api/v1/projects/acme/error-groups",
                        headers=headers, timeout=10).status_code == 401
