"""Single sign-on in Chromium: the login page's button leads to the OpenID provider's
own login page (tests/js/oidc_provider.mjs), whose form signs in and comes back to the
page asked for, logged in with the role of the account's groups; logging out goes
through the provider's sign-out page and back to the login page."""

from __future__ import annotations

import pytest

from tests.support import clients
from tests.support.oidc_provider import IdP
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.OIDC_PROVIDER)


def test_signing_in_and_out_through_the_provider_in_a_browser(
        browser: object, sso: Server, idp: IdP) -> None:
    context = browser.new_context()  # type: ignore[attr-defined]
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(sso.base + "/login?next=/account")
    page.click("#sso-corp-b")
    page.wait_for_url(f"{idp.url}/interaction/**")
    page.fill("input[name=login]", "cy")
    page.fill("input[name=password]", "any password")
    page.click("button[type=submit]")
    page.wait_for_url(sso.base + "/account")
    assert page.locator("nav.account .me").inner_text() == "cy@example.com"
    assert sso.query("SELECT role FROM users WHERE email = 'cy@example.com'") == [("viewer",)]
    page.click("form.logout button")  # Log out
    page.wait_for_url(f"{idp.url}/session/end**")
    page.click("button[name=logout]")
    page.wait_for_url(sso.base + "/login")
    assert page.locator("#sso-corp-b").is_visible()
    context.close()
    assert errors == []
